import type { Decision } from '../decision.js';
import type { KeyState, Waiter } from './key-state.js';
import { decideLocally } from './local-decision.js';
import { type LeaseContext, leaseFor } from './remote-lease.js';

/*
 * One lease in flight per key. The request that finds none takes it; later requests
 * for the key queue (FIFO) and are served from the block that arrives; other keys never wait.
 */

/** The request that found no lease in flight takes one; later requests for the key queue. */
export async function takeLease(context: LeaseContext, key: string, state: KeyState, cost: number): Promise<Decision> {
  const queue: Waiter[] = [];
  state.queue = queue;
  let decision: Decision | undefined;
  try {
    do decision = await leaseFor(context, key, state, cost);
    while (decision === undefined);
  } catch (error) {
    fail(context, state, error);
    throw error;
  }
  context.counters.requests++;
  if (queue.length === 0) state.queue = undefined;
  else void serve(context, key, state, queue);
  return decision;
}

/** Queues a request behind the key's lease in flight. */
export function waitForLease(context: LeaseContext, queue: Waiter[], cost: number): Promise<Decision> {
  context.counters.waited++;
  return new Promise<Decision>((resolve, reject) => {
    queue.push({ cost, resolve, reject });
  });
}

// Serves the requests that queued behind a lease, in order, one lease in flight at a time.
async function serve(context: LeaseContext, key: string, state: KeyState, queue: Waiter[]): Promise<void> {
  const { model, counters } = context;
  while (queue.length > 0) {
    const head = queue[0] as Waiter;
    let decision: Decision | undefined;
    try {
      decision = state.anchored ? decideLocally(model, state, head.cost, context.nowMs(), counters) : undefined;
      decision ??= await leaseFor(context, key, state, head.cost);
    } catch (error) {
      fail(context, state, error);
      return;
    }
    if (decision === undefined) continue;
    queue.shift();
    counters.requests++;
    head.resolve(decision);
  }
  state.queue = undefined;
}

// A failed remote call fails the request that made it and every request queued behind it.
function fail(context: LeaseContext, state: KeyState, error: unknown): void {
  context.counters.remoteErrors++;
  const queue = state.queue ?? [];
  state.queue = undefined;
  for (const waiter of queue) waiter.reject(error);
}

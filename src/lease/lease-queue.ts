import type { Decision } from '../decision.js';
import type { KeyState, Waiter } from './key-state.js';
import { decideLocally } from './local-decision.js';
import { type LeaseContext, leaseFor } from './remote-lease.js';

/*
 * One lease in flight per key. A request the key's units cannot serve joins the key's queue
 * (FIFO); the request that finds no lease in flight starts serving it, one microtask later, so
 * the requests of the same turn join its call. Each remote call asks for what the whole queue
 * needs when it is sent, not for its head alone, so the requests that queued behind one round
 * trip are served by the next one. Other keys never wait.
 */

/** Queues a request the key's held units cannot serve; the first to queue starts serving the key. */
export function enqueue(context: LeaseContext, key: string, state: KeyState, cost: number): Promise<Decision> {
  return new Promise<Decision>((resolve, reject) => {
    const waiter: Waiter = { cost, resolve, reject };
    if (state.queue !== undefined) {
      context.counters.waited++;
      state.queue.push(waiter);
      return;
    }
    const queue = [waiter];
    state.queue = queue;
    // One microtask later: the requests for the key made in the same turn join the first call.
    queueMicrotask(() => void serve(context, key, state, queue));
  });
}

// Serves the queue in order, one remote call in flight at a time; each call serves a prefix of it.
async function serve(context: LeaseContext, key: string, state: KeyState, queue: Waiter[]): Promise<void> {
  const { model, counters } = context;
  while (queue.length > 0) {
    const head = queue[0] as Waiter;
    let decisions: readonly Decision[];
    try {
      const local = state.anchored ? decideLocally(model, state, head.cost, context.nowMs(), counters) : undefined;
      decisions = local ? [local] : await leaseFor(context, key, state, queue);
    } catch (error) {
      fail(context, state, error);
      return;
    }
    for (const decision of decisions) {
      counters.requests++;
      (queue.shift() as Waiter).resolve(decision);
    }
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

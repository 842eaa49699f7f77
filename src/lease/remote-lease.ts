import type { AlgorithmParams } from '../algorithms/types.js';
import type { Decision } from '../decision.js';
import type { Limiter } from '../limiter.js';
import { type KeyState, observe, recordLease } from './key-state.js';
import { answer, expire } from './local-decision.js';
import type { RemoteModel } from './remote-model.js';
import type { Returns } from './returns.js';
import { nextLeaseSize } from './sizing.js';
import type { LeaseCounters } from './stats.js';

/** What taking a lease from the remote needs: the settings, the remote's model, the counters. */
export interface LeaseContext {
  readonly remote: Limiter;
  /** The per-call params every remote call of this lane carries (undefined: the remote's own). */
  readonly params: AlgorithmParams | undefined;
  readonly model: RemoteModel;
  readonly counters: LeaseCounters;
  readonly leaseSize: number;
  /** 0 when adaptive sizing is off. */
  readonly adaptiveDivisor: number;
  /** How long a cached refusal is trusted without asking again (`returnIdleMs`, or forever). */
  readonly refusalTrustMs: number;
  readonly returns: Returns;
  nowMs(): number;
}

function ask(context: LeaseContext, key: string, cost: number): Promise<Decision> {
  context.counters.remoteCalls++;
  return context.remote.limit(key, context.params === undefined ? { cost } : { cost, params: context.params });
}

/**
 * Taking a lease for the request at the head of the key's queue: asks the remote for max(lease size,
 * shortfall), then for exactly the shortfall when refused. Undefined when the lease arrived but
 * the older units it was to top up expired meanwhile: the units are kept and the head asks again.
 */
export async function leaseFor(
  context: LeaseContext,
  key: string,
  state: KeyState,
  cost: number,
): Promise<Decision | undefined> {
  const { model, counters, nowMs, leaseSize, adaptiveDivisor } = context;
  let askedAtMs = nowMs();
  expire(state, askedAtMs, model, counters);
  if (!state.anchored && state.units > 0) return confirm(context, key, state, cost, askedAtMs);
  if (cost === 0 || cost > model.limit) return report(context, key, state, cost, askedAtMs);
  let shortfall = cost - state.units;
  const heard = state.anchored ? model.remainingAt(state, askedAtMs) : undefined;
  // Asking again before a refusal's retry-after only looks for units other instances returned:
  // the shortfall, not a lease the remote said it cannot grant.
  const probing = state.deniedUnits > 0 && askedAtMs < state.deniedUntilMs;
  let units = probing ? shortfall : Math.max(nextLeaseSize(leaseSize, adaptiveDivisor, heard), shortfall);
  const { epoch } = state;
  let reply = await ask(context, key, units);
  if (!reply.allowed && !reply.degraded && units > shortfall) {
    // A lease of 30 against 10 left must not refuse a request for 1.
    askedAtMs = nowMs();
    expire(state, askedAtMs, model, counters);
    shortfall = cost - state.units;
    units = shortfall;
    reply = await ask(context, key, units);
  }
  if (reply.degraded) return reply;
  observe(state, askedAtMs, reply);
  // An invalidation heard while the call was out may postdate the reply: keep nothing from it.
  if (state.epoch !== epoch) return unheld(context, key, state, cost, askedAtMs, units, reply);
  if (!reply.allowed) return refused(context, state, askedAtMs, units, reply);
  return granted(context, key, state, cost, askedAtMs, units, reply);
}

// A reply older than an invalidation answers its request and leaves no lease, refusal or block behind.
function unheld(
  context: LeaseContext,
  key: string,
  state: KeyState,
  cost: number,
  askedAtMs: number,
  units: number,
  reply: Decision,
): Decision | undefined {
  if (!reply.allowed)
    return { ...answer(context.model, state, askedAtMs, false, reply.retryAfterMs), ...blockOf(reply) };
  const decision = granted(context, key, state, cost, askedAtMs, units, reply);
  state.units = 0;
  return decision;
}

function blockOf(reply: Decision): Partial<Decision> {
  return reply.reason === 'blocked' ? { remaining: 0, reason: 'blocked' } : {};
}

/**
 * Units held across an invalidation that left them spent (a block, an unblock, a reward): one
 * cost-0 call asks the remote whether the key is blocked before they are spent again. Undefined
 * when the held units do not cover the request: the head then leases as usual.
 */
async function confirm(
  context: LeaseContext,
  key: string,
  state: KeyState,
  cost: number,
  askedAtMs: number,
): Promise<Decision | undefined> {
  const { epoch } = state;
  const reply = await ask(context, key, 0);
  if (reply.degraded) return reply;
  observe(state, askedAtMs, reply);
  if (state.epoch !== epoch) return undefined;
  if (reply.reason === 'blocked') return refused(context, state, askedAtMs, Math.max(1, cost), reply);
  const atMs = context.nowMs();
  expire(state, atMs, context.model, context.counters);
  if (cost > state.units) return undefined;
  state.units -= cost;
  context.counters.localHits++;
  return answer(context.model, state, atMs, true, 0);
}

// Nothing to lease (cost 0, or above the limit): the remote reports, this instance listens.
async function report(
  context: LeaseContext,
  key: string,
  state: KeyState,
  cost: number,
  askedAtMs: number,
): Promise<Decision> {
  const reply = await ask(context, key, cost);
  if (reply.degraded) return reply;
  observe(state, askedAtMs, reply);
  return answer(context.model, state, askedAtMs, reply.allowed, reply.retryAfterMs);
}

// Refused twice: the refusal is cached until the remote's retry-after (trusted for at most refusalTrustMs).
function refused(context: LeaseContext, state: KeyState, askedAtMs: number, units: number, reply: Decision): Decision {
  context.counters.refusals++;
  state.deniedUnits = units;
  state.deniedUntilMs = askedAtMs + reply.retryAfterMs;
  state.trustRefusalUntilMs = askedAtMs + Math.min(reply.retryAfterMs, context.refusalTrustMs);
  // Held units stay spent through a block; the local decision denies before it spends them.
  if (reply.reason === 'blocked') state.blockedUntilMs = state.deniedUntilMs;
  return { ...answer(context.model, state, askedAtMs, false, reply.retryAfterMs), ...blockOf(reply) };
}

function granted(
  context: LeaseContext,
  key: string,
  state: KeyState,
  cost: number,
  askedAtMs: number,
  units: number,
  reply: Decision,
): Decision | undefined {
  const { model, counters } = context;
  counters.leases++;
  counters.leasedUnits += units;
  expire(state, context.nowMs(), model, counters);
  if (state.units + units < cost) {
    state.units = 0;
    recordLease(state, askedAtMs, units, reply.resetAfterMs, model.intervalMs);
    return undefined;
  }
  recordLease(state, askedAtMs, units, reply.resetAfterMs, model.intervalMs);
  // The remote admitted these units at the time it was asked: the head spends them there.
  state.units -= cost;
  if (context.adaptiveDivisor > 0 && context.remote.refund !== undefined) {
    trimToShare(context, key, state, units, reply);
  }
  return answer(model, state, askedAtMs, true, 0);
}

// What this instance heard before leasing may be stale; the reply is not. Keep no more than a
// divisor-th of what the remote held before this lease, and give the rest back.
function trimToShare(context: LeaseContext, key: string, state: KeyState, units: number, reply: Decision): void {
  const excess = state.units - Math.floor((reply.remaining + units) / context.adaptiveDivisor);
  if (excess > 0) {
    state.remaining += excess;
    void context.returns.trim(key, state, excess);
  }
}

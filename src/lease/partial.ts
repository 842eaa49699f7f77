import type { AlgorithmParams } from '../algorithms/types.js';
import type { Decision } from '../decision.js';
import type { Limiter } from '../limiter.js';
import type { KeyState } from './key-state.js';
import { observe } from './key-state.js';
import type { LeaseCounters } from './stats.js';

/** What partial admission reads and updates of a leased limiter. */
export interface PartialContext {
  readonly remote: Limiter;
  /** The numbers the lane's units are taken under; `undefined` for the limiter's own. */
  readonly params: AlgorithmParams | undefined;
  readonly limit: number;
  readonly counters: LeaseCounters;
  nowMs(): number;
  /** Drops the key's held units that may no longer be spent at `atMs`. */
  expire(state: KeyState, atMs: number): void;
  /** The leased limiter's decision for the key at `atMs`: held units plus the remote's, as heard. */
  answer(state: KeyState, atMs: number, allowed: boolean, retryAfterMs: number): Decision;
}

/**
 * Partial admission through leasing (`limit(key, { cost, partial: true })`): the key's held units
 * first, then the remote, asked partially for the rest in one call, which leases nothing. A key
 * whose held units cover the cost is a lease hit; a key with a lease in flight leaves its held
 * units to the requests queued for them and asks the remote for the whole cost.
 *
 * Never over-admits: held units were charged to the remote when leased, and the remote admits
 * the rest atomically. It can under-admit by the units other instances hold for the key (as every
 * leased decision can), never by this instance's own.
 */
export function createPartialAdmission(context: PartialContext) {
  const { remote, limit, counters } = context;
  return async (key: string, state: KeyState | undefined, cost: number): Promise<Decision> => {
    const atMs = context.nowMs();
    let held = 0;
    // Held units never pass a block the remote reported: while it runs, the remote decides.
    if (state?.anchored && state.queue === undefined && atMs >= state.blockedUntilMs) {
      context.expire(state, atMs);
      held = Math.min(cost, state.units);
      state.units -= held;
      counters.spentUnits += held;
      if (held === cost && cost > 0) {
        counters.requests++;
        counters.localHits++;
        return { ...context.answer(state, atMs, true, 0), admitted: cost };
      }
    }
    counters.remoteCalls++;
    let reply: Decision;
    try {
      reply = await remote.limit(key, {
        cost: cost - held,
        partial: true,
        ...(context.params && { params: context.params }),
      });
    } catch (error) {
      if (state) state.units += held;
      counters.spentUnits -= held;
      counters.remoteErrors++;
      throw error;
    }
    counters.requests++;
    const admitted = held + (reply.admitted ?? 0);
    if (reply.degraded) return { ...reply, admitted };
    if (state?.anchored && state.queue === undefined) {
      observe(state, atMs, reply);
      // Units the remote admitted moved its schedule: a refusal cached before would deny later
      // requests with a retry-after that is now too short (as a lease does, `recordLease`).
      if ((reply.admitted ?? 0) > 0) state.deniedUnits = 0;
    }
    const units = state?.units ?? 0;
    return {
      ...reply,
      allowed: admitted > 0 || cost === 0,
      remaining: reply.reason === 'blocked' ? 0 : Math.min(limit, units + reply.remaining),
      retryAfterMs: admitted > 0 ? 0 : reply.retryAfterMs,
      admitted,
    };
  };
}

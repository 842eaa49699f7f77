import { type Decision, neverAdmitted } from '../decision.js';
import { dropExpired, type KeyState } from './key-state.js';
import type { RemoteModel } from './remote-model.js';
import type { LeaseCounters } from './stats.js';

/*
 * The decisions one instance takes for a key without asking its remote (the local service and cached
 * refusals of `createLeasedLimiter`): pure over the key's state, the remote's model and a clock reading.
 */

/** Drops `state`'s held units that may no longer be spent at `atMs`, counting them. */
export function expire(state: KeyState, atMs: number, model: RemoteModel, counters: LeaseCounters): void {
  if (state.units !== 0) counters.expiredUnits += dropExpired(state, atMs, model.intervalMs);
}

/**
 * A decision as this instance reports it: the remote's state as last heard (regenerated since)
 * with the units held here given back: `remaining` adds them, the reset leaves out their slots.
 * One instance reports what the remote alone would; in a fleet, units other instances hold count
 * as spent and their spending since the last reply is unseen (docs/leasing.md).
 */
export function answer(
  model: RemoteModel,
  state: KeyState,
  atMs: number,
  allowed: boolean,
  retryAfterMs: number,
): Decision {
  const limit = model.limit;
  const remaining = Math.min(limit, state.units + model.remainingAt(state, atMs));
  const resetAfterMs = Math.max(0, state.resetAtMs - model.heldSlotsMs(state.units) - atMs);
  // A cost above the limit (by the local model or the remote) waits Infinity: stored once in the
  // class every decision shares, it would box every later decision's numbers, process-wide.
  if (retryAfterMs === Number.POSITIVE_INFINITY) return neverAdmitted({ limit, remaining, resetAfterMs });
  return { allowed, limit, remaining, retryAfterMs, resetAfterMs };
}

/** Retry-after of a cached refusal covering `need` more units, or undefined when none does. */
export function refusalFor(model: RemoteModel, state: KeyState, need: number, atMs: number): number | undefined {
  if (state.deniedUnits === 0 || need < state.deniedUnits || atMs >= state.trustRefusalUntilMs) return undefined;
  return model.retryAfterMs(state, atMs, need, state.deniedUnits, state.deniedUntilMs);
}

/**
 * The local service and cached refusals, without I/O, for a key heard from and without a lease in flight: spends `cost`
 * from the held units, or denies by a cached refusal (or a cost above the limit, when the model
 * is exact); undefined when only the remote can decide.
 */
export function decideLocally(
  model: RemoteModel,
  state: KeyState,
  cost: number,
  atMs: number,
  counters: LeaseCounters,
): Decision | undefined {
  expire(state, atMs, model, counters);
  if (atMs < state.blockedUntilMs) {
    // Held units must not pass a block: a block no longer trusted is asked about again.
    const blocked = blockedAnswer(model, state, atMs);
    if (blocked) counters.cachedDenials++;
    return blocked;
  }
  if (cost === 0 && !model.exact) return undefined;
  // An exhausted key may be over a smaller per-call limit, where even cost 0 is denied: the remote says.
  if (cost === 0 && state.units === 0 && model.remainingAt(state, atMs) === 0) return undefined;
  if (cost <= state.units) {
    state.units -= cost;
    counters.spentUnits += cost;
    counters.localHits++;
    return answer(model, state, atMs, true, 0);
  }
  if (cost > model.limit && !model.exact) return undefined;
  const retryAfterMs =
    cost > model.limit ? Number.POSITIVE_INFINITY : refusalFor(model, state, cost - state.units, atMs);
  if (retryAfterMs === undefined) return undefined;
  counters.cachedDenials++;
  return answer(model, state, atMs, false, retryAfterMs);
}

/** The denial of a key the remote said is blocked, while the block runs and is trusted; else undefined. */
export function blockedAnswer(model: RemoteModel, state: KeyState, atMs: number): Decision | undefined {
  if (atMs >= state.blockedUntilMs || atMs >= state.trustRefusalUntilMs) return undefined;
  return { ...answer(model, state, atMs, false, state.blockedUntilMs - atMs), remaining: 0, reason: 'blocked' };
}

/** `peek` without I/O: a held unit admits, a cached refusal covering one unit denies; else undefined. */
export function peekLocally(
  model: RemoteModel,
  state: KeyState,
  atMs: number,
  counters: LeaseCounters,
): Decision | undefined {
  expire(state, atMs, model, counters);
  if (atMs < state.blockedUntilMs) return blockedAnswer(model, state, atMs);
  if (state.units >= 1) return answer(model, state, atMs, true, 0);
  const retryAfterMs = refusalFor(model, state, 1, atMs);
  return retryAfterMs === undefined ? undefined : answer(model, state, atMs, false, retryAfterMs);
}

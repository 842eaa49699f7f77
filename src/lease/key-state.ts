import type { Decision } from '../decision.js';
import type { LeaseContext } from './remote-lease.js';
import type { RemoteView } from './remote-model.js';

/** A request waiting for the key's lease in flight. */
export interface Waiter {
  readonly cost: number;
  resolve(decision: Decision): void;
  reject(error: unknown): void;
}

/**
 * One key's local state on one instance: the units leased and not yet served, when
 * they expire, what the remote last said, and a cached refusal. Times are local ms.
 *
 * Held units are always the latest slots of the remote's schedule for the key (the trigger of a
 * lease spends the older units first), so the i-th held unit from the top falls due at
 * `endMs − i·T`, and a unit may be spent only while its slot is still ahead: that is what
 * {@link dropExpired} enforces.
 */
export interface KeyState extends RemoteView {
  /** The lane (one set of the remote's numbers) the key's units are leased under. */
  readonly lane: LeaseContext;
  /** Leased units not yet served; trust only after {@link dropExpired}. */
  units: number;
  /** A lower bound on when the remote's schedule reaches the last held unit. */
  endMs: number;
  /** Every held unit is gone lease size × T after the lease was asked for. */
  expiresAtMs: number;
  /** Units the remote refused (0: no refusal cached), in the remote's terms: units asked for. */
  deniedUnits: number;
  /** Until when that refusal stands (the remote's retry-after). */
  deniedUntilMs: number;
  /**
   * Until when the refusal is trusted without asking again: `deniedUntilMs`, or sooner when the
   * fleet returns leases (units another instance returns can only be seen by asking).
   */
  trustRefusalUntilMs: number;
  /** Until when the remote said the key is blocked (0: no block heard of); trusted as a refusal is. */
  blockedUntilMs: number;
  /** Counts the invalidations heard for the key, so a reply asked for before one is not trusted after it. */
  epoch: number;
  /** Counts those of them that dropped the key's held units (`reset`, `invalidate`). */
  resets: number;
  /** Counts those of them that gave the key's held units back (`reward`). */
  rewards: number;
  /**
   * Units of the key this instance dropped unspent at lane changes (the remote takes no refunds)
   * that the remote has not regenerated yet: they shrink the key's next leases, so that whatever
   * the switching pattern, at most one lease is lost until {@link KeyState.droppedUntilMs}.
   */
  droppedUnits: number;
  /** When the remote has the dropped units back (its reset as last heard when they were dropped). */
  droppedUntilMs: number;
  /** Last request for the key, for lease return on idle. */
  usedAtMs: number;
  /** When the key last moved to the recent end of its table (see `key-table.ts`). */
  movedAtMs: number;
  /** Requests waiting on the lease in flight; undefined when none is. */
  queue: Waiter[] | undefined;
  /** Calls passed straight to the remote and not settled yet (docs/leasing.md, "Pass-through"). */
  passing: number;
}

/** A key nothing is known about yet, in `lane`. */
export function createKeyState(nowMs: number, lane: LeaseContext): KeyState {
  return {
    lane,
    anchored: false,
    anchorMs: nowMs,
    remaining: 0,
    resetAtMs: nowMs,
    units: 0,
    endMs: nowMs,
    expiresAtMs: nowMs,
    deniedUnits: 0,
    deniedUntilMs: nowMs,
    trustRefusalUntilMs: nowMs,
    blockedUntilMs: 0,
    epoch: 0,
    resets: 0,
    rewards: 0,
    droppedUnits: 0,
    droppedUntilMs: nowMs,
    usedAtMs: nowMs,
    movedAtMs: nowMs,
    queue: undefined,
    passing: 0,
  };
}

/**
 * Drops the held units that may no longer be spent at `nowMs` and returns how many.
 *
 * Two limits apply. Lease-wide: nothing survives `expiresAtMs`. Finer, per unit: a unit
 * whose slot in the remote's schedule is less than one T ahead has been regenerated upstream,
 * so spending it would add to fresh quota; only ⌊(endMs − now) / T⌋ units are still ahead. That
 * second limit is what makes fleet-wide admissions obey burst + ⌊Δ/T⌋ over every interval, not
 * only on average (see docs/leasing.md).
 */
export function dropExpired(state: KeyState, nowMs: number, intervalMs: number): number {
  const held = state.units;
  if (held === 0) return 0;
  const ahead = unitsAhead(state, nowMs, intervalMs);
  if (ahead >= held) return 0;
  state.units = Math.max(0, ahead);
  return held - state.units;
}

/** How many units the key's lease may hold at `nowMs`: those whose slots are still ahead (see {@link dropExpired}). */
export function unitsAhead(state: KeyState, nowMs: number, intervalMs: number): number {
  return nowMs >= state.expiresAtMs ? 0 : Math.floor((state.endMs - nowMs) / intervalMs);
}

/**
 * Records a lease of `units` asked for at `askedAtMs` and granted with `resetAfterMs`, after
 * which the key holds `units + held` and the caller spends from them. `resetAfterMs` is the
 * remote's time until the key is fresh, i.e. until the slot of the last unit granted; it is
 * rounded up to a ms, hence the 1 ms taken off to keep `endMs` a lower bound.
 */
export function recordLease(
  state: KeyState,
  askedAtMs: number,
  units: number,
  resetAfterMs: number,
  intervalMs: number,
): void {
  state.units += units;
  state.endMs = askedAtMs + resetAfterMs - 1;
  state.expiresAtMs = askedAtMs + units * intervalMs;
  state.deniedUnits = 0;
}

/** Records what the remote said about the key in a reply asked for at `askedAtMs`. */
export function observe(state: KeyState, askedAtMs: number, reply: Decision): void {
  state.anchored = true;
  state.anchorMs = askedAtMs;
  state.remaining = reply.remaining;
  state.resetAtMs = askedAtMs + reply.resetAfterMs;
}

import type { Algorithm } from '../algorithms/types.js';

/**
 * The emission interval T of an algorithm, in milliseconds: the time its store takes to
 * regenerate one unit at the sustained rate (`horizonMs / limit`). GCRA: periodMs / limit;
 * token bucket: periodMs / rate; windows: windowMs / limit (there a unit comes back all at once
 * when the window moves on, so T is the average, not the schedule).
 *
 * The core rounds its own interval up (GCRA to whole µs, `horizonMs` to whole ms), so this is
 * never shorter than the store's T: a lease judged with it expires no later than it should.
 * @example
 * ```ts
 * import { emissionIntervalMs, gcra } from 'sluice';
 *
 * emissionIntervalMs(gcra({ limit: 100, periodMs: 60_000 })); // 600
 * ```
 */
export function emissionIntervalMs(algorithm: Algorithm): number {
  return algorithm.horizonMs / algorithm.limit;
}

/** What an instance last heard from the remote about one key (all times local ms). */
export interface RemoteView {
  /** False until the first reply: nothing is known, so nothing is decided locally. */
  anchored: boolean;
  /** When the last reply was asked for. */
  anchorMs: number;
  /** The remote's `remaining` in that reply. */
  remaining: number;
  /** `anchorMs + resetAfterMs` of that reply: when the key is fresh again if nobody spends. */
  resetAtMs: number;
}

/**
 * How the remote's state moves on between replies, so that a local decision reports what the
 * remote would report now, and a cached refusal keeps an exact retry-after.
 *
 * Rate algorithms (GCRA, token bucket) regenerate one unit every T from a fixed phase: the key
 * held 0 units at `resetAtMs − limit·T` and gains one each T after. A fixed window gives
 * everything back at `resetAtMs` and nothing before. Both are exact. The sliding windows give
 * units back as entries or weight leave the window, which one reply does not show: their model
 * keeps the last `remaining` (a lower bound until `resetAtMs`) and is marked inexact, so cost-0
 * reports go to the remote. No model sees other instances' spending since the reply; that only
 * lowers what the remote holds, so a cached refusal stays a refusal.
 */
export interface RemoteModel {
  readonly limit: number;
  /** T, ms. */
  readonly intervalMs: number;
  /** Whether {@link RemoteModel.remainingAt} equals the remote's own answer (absent other spenders). */
  readonly exact: boolean;
  /** The remote's `remaining` for the key at `nowMs`, as far as this instance knows. */
  remainingAt(view: RemoteView, nowMs: number): number;
  /**
   * How much sooner the key would be fresh if `units` held here went back to the remote: their
   * slots, `units × T`, for the rate algorithms, whose held units are the last ones the remote
   * granted; 0 for the windows, whose reset is the window's end whoever holds the units.
   */
  heldSlotsMs(units: number): number;
  /**
   * Milliseconds until the remote could grant `units`, given that it refused `deniedUnits`
   * (≤ units) with a retry-after ending at `deniedUntilMs`. Exact for the same units; for more,
   * exact where the model is, a lower bound elsewhere.
   */
  retryAfterMs(view: RemoteView, nowMs: number, units: number, deniedUnits: number, deniedUntilMs: number): number;
}

/** The {@link RemoteModel} for a remote running `algorithm`. */
export function remoteModelOf(algorithm: Algorithm): RemoteModel {
  const limit = algorithm.limit;
  const intervalMs = emissionIntervalMs(algorithm);
  const horizonMs = algorithm.horizonMs;
  if (algorithm.replenish !== 'steady') {
    return {
      limit,
      intervalMs,
      exact: algorithm.replenish === 'window',
      remainingAt: (view, nowMs) => (nowMs >= view.resetAtMs ? limit : view.remaining),
      heldSlotsMs: () => 0,
      retryAfterMs: (_view, nowMs, _units, _deniedUnits, deniedUntilMs) => deniedUntilMs - nowMs,
    };
  }
  // Units regenerated between the reply and now: emission boundaries crossed, counted from the
  // key's zero point, so the answer equals the remote's own at every boundary, not just on average.
  const boundaries = (view: RemoteView, nowMs: number): number => {
    const zeroMs = view.resetAtMs - horizonMs;
    return Math.floor((nowMs - zeroMs) / intervalMs) - Math.floor((view.anchorMs - zeroMs) / intervalMs);
  };
  return {
    limit,
    intervalMs,
    exact: true,
    heldSlotsMs: (units) => units * intervalMs,
    remainingAt(view, nowMs) {
      if (nowMs <= view.anchorMs) return view.remaining;
      return Math.min(limit, view.remaining + Math.max(0, boundaries(view, nowMs)));
    },
    retryAfterMs(view, nowMs, units, deniedUnits, deniedUntilMs) {
      const sameRequest = deniedUntilMs - nowMs;
      if (units === deniedUnits) return sameRequest;
      // Each further unit waits one more T after the point where the key held 0.
      const zeroMs = view.resetAtMs - horizonMs;
      return Math.max(sameRequest, Math.ceil(zeroMs + units * intervalMs - nowMs));
    },
  };
}

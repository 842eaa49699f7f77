import { type Decision, neverAdmitted } from '../decision.js';
import { ConfigError } from '../errors.js';
import { type OptionNames, requireInteger, requireOptions } from '../validate.js';
import { floorDiv } from './integer.js';
import { paramsResolver } from './params.js';
import { spendHeld } from './partial.js';
import { share } from './share.js';
import type { Algorithm } from './types.js';

/** Options of {@link slidingWindowCounter}. */
export interface SlidingWindowCounterOptions {
  /** Units admitted per window (approximately over any window: see the bound). Integer ≥ 1. */
  limit: number;
  /** Window length, in milliseconds. Integer ≥ 1. */
  windowMs: number;
}

const MAX_PERIOD_MS = 10 * 365 * 24 * 3600 * 1000;

const SLIDING_WINDOW_COUNTER_OPTION_NAMES: OptionNames<SlidingWindowCounterOptions> = { limit: true, windowMs: true };

/**
 * Sliding window counter (the approximation Cloudflare described in 2017): two fixed-window
 * counts, the current window's and the previous one's, and the previous count weighted by the
 * share of the previous window still inside the sliding window ending now. At e ms into the
 * current window the key has used `⌊prev × (windowMs − e) / windowMs⌋ + curr` units; a request
 * of cost c is admitted when that plus c is at most `limit`. Integer arithmetic, so memory and
 * Redis agree to the unit.
 *
 * The approximation: it assumes the previous window's units were spread evenly across it. It is
 * exact when they were and errs either way when they were not. Bound: every window admits at
 * most `limit` units, so any interval of length `windowMs` (which overlaps at most two windows)
 * holds at most 2 × limit, and that happens only when one window's units all arrive at its end.
 * Windows start at a key's first admitted request (as {@link fixedWindow}); a key is fresh again
 * two windows after its last admitted window.
 *
 * State is three numbers per key: current count, previous count, current window start (ms).
 *
 * Admin operations (docs/admin.md): `penalty(key, units)` counts the current window up as far as
 * the limit (as many as a partial admission of `units` would); `reward(key, units)` counts the
 * current window down, then the previous window's count to the largest whose weight now is less
 * by the rest, so `remaining` rises by exactly `units` (as far as fresh); both 0 is a fresh key.
 *
 * Pros: constant memory (unlike the log), no 2 × limit burst at one boundary for ordinary
 * traffic (unlike the fixed window). Cons: approximate; with small limits the rounding shows
 * (limit 1: the next unit is admitted only once the previous window's weight falls below 1).
 *
 * @throws {ConfigError} when options is not an object, limit or windowMs is not a positive integer, or when
 * `(limit + 1) × windowMs` is 2^53 or more.
 * @example
 * ```ts
 * import { createMemoryLimiter, slidingWindowCounter } from 'sluice';
 *
 * // About 600 per rolling minute in constant memory per key.
 * const limiter = createMemoryLimiter({ algorithm: slidingWindowCounter({ limit: 600, windowMs: 60_000 }) });
 * const decision = await limiter.limit('ip:203.0.113.7');
 * ```
 */
export function slidingWindowCounter(options: SlidingWindowCounterOptions): Algorithm {
  requireOptions('slidingWindowCounter options', options, SLIDING_WINDOW_COUNTER_OPTION_NAMES);
  const limit = requireInteger('limit', options.limit);
  const windowMs = requireInteger('windowMs', options.windowMs, 1, MAX_PERIOD_MS);
  if (!Number.isSafeInteger((limit + 1) * windowMs)) {
    throw new ConfigError(`(limit + 1) × windowMs must stay below 2^53 to be exact, got ${limit} × ${windowMs}`);
  }

  // The previous window's count weighted by the part of it still inside the sliding window.
  const weighted = (prev: number, elapsedMs: number): number => floorDiv(prev * (windowMs - elapsedMs), windowMs);
  // Milliseconds into a window after which `count` in the previous window weighs at most `most`.
  const weighsAtMostFrom = (count: number, most: number): number =>
    windowMs - floorDiv((most + 1) * windowMs - 1, count);
  // The largest previous count that weighs at most `most` at `elapsedMs` into the window.
  const mostWeighingAtMost = (most: number, elapsedMs: number): number =>
    floorDiv((most + 1) * windowMs - 1, windowMs - elapsedMs);

  const decide: Algorithm['decide'] = (state, offset, nowMs, cost, commit) => {
    let curr = state[offset] as number;
    let prev = state[offset + 1] as number;
    let startMs = state[offset + 2] as number;
    let t = nowMs;
    if (curr === 0 && prev === 0) {
      startMs = t;
    } else {
      t = Math.max(t, startMs); // a clock behind the window's start counts in this window
      const windows = floorDiv(t - startMs, windowMs);
      if (windows >= 2) {
        curr = 0;
        prev = 0;
        startMs = t;
      } else if (windows === 1) {
        prev = curr;
        curr = 0;
        startMs += windowMs;
      }
    }
    const elapsedMs = t - startMs;
    const old = weighted(prev, elapsedMs);
    const decision = (allowed: boolean, current: number, retryAfterMs: number): Decision => {
      // remaining === limit once nothing weighs: the previous window's weight below 1, no current units.
      let resetAtMs = startMs;
      if (current > 0) resetAtMs = startMs + windowMs + weighsAtMostFrom(current, 0);
      else if (old > 0) resetAtMs = startMs + weighsAtMostFrom(prev, 0);
      return {
        allowed,
        limit,
        remaining: Math.max(0, limit - old - current), // below 0 only for a state written under a larger limit
        retryAfterMs,
        resetAfterMs: Math.max(0, resetAtMs - t),
      };
    };
    if (cost > limit) return neverAdmitted(decision(false, curr, 0));
    if (old + curr + cost > limit) return decision(false, curr, retryAfter(prev, curr, elapsedMs, cost));
    if (commit && cost > 0) {
      state[offset] = curr + cost;
      state[offset + 1] = prev;
      state[offset + 2] = startMs;
    }
    return decision(true, curr + cost, 0);
  };

  return {
    name: 'sliding-window-counter',
    limit,
    horizonMs: 2 * windowMs,
    // [current count, previous count, current window start ms]
    slots: 3,
    scriptParams: [limit, windowMs],
    replenish: 'sliding',
    divide: (n) => slidingWindowCounter({ limit: share(limit, n), windowMs }),
    withParams: paramsResolver('slidingWindowCounter', ['limit', 'windowMs'], options, slidingWindowCounter),
    decide,
    freshAtMs(state, offset) {
      if (state[offset] === 0 && state[offset + 1] === 0) return 0;
      return (state[offset + 2] as number) + 2 * windowMs;
    },
    // Counts up the current window, as far as the limit (as many units as the key holds now).
    penalty(state, offset, nowMs, units) {
      spendHeld(units, (n, commit) => decide(state, offset, nowMs, n, commit));
    },
    // Counts down the current window (its units are the newest), then the previous one by
    // enough for its weight to fall by the rest: `remaining` rises by exactly `units` now (as far
    // as fresh), and the previous window's smaller count keeps weighing less as it slides out.
    reward(state, offset, nowMs, units) {
      let curr = state[offset] as number;
      let prev = state[offset + 1] as number;
      let startMs = state[offset + 2] as number;
      if (curr === 0 && prev === 0) return;
      const t = Math.max(nowMs, startMs);
      const windows = floorDiv(t - startMs, windowMs);
      if (windows >= 2) return; // nothing weighs any more: already a fresh key
      if (windows === 1) {
        prev = curr;
        curr = 0;
        startMs += windowMs;
      }
      const elapsedMs = t - startMs;
      const fromCurr = Math.min(units, curr);
      const weighs = Math.max(0, weighted(prev, elapsedMs) - (units - fromCurr));
      curr -= fromCurr;
      prev = Math.min(prev, mostWeighingAtMost(weighs, elapsedMs));
      state[offset] = curr;
      state[offset + 1] = prev;
      state[offset + 2] = curr === 0 && prev === 0 ? 0 : startMs;
    },
  };

  // A denied cost ≤ limit: the weight of `prev` falls as the window ages; failing that, the next
  // window starts with `curr` as its previous count, whose weight then falls in turn.
  function retryAfter(prev: number, curr: number, elapsedMs: number, cost: number): number {
    const room = limit - cost - curr; // what the previous window may weigh for this request to pass
    if (room >= 0 && prev > 0) {
      const fromMs = weighsAtMostFrom(prev, room);
      if (fromMs < windowMs) return fromMs - elapsedMs;
    }
    const nextFromMs = curr === 0 ? 0 : Math.max(0, weighsAtMostFrom(curr, limit - cost));
    return windowMs - elapsedMs + nextFromMs;
  }
}

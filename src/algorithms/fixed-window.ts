import { type Decision, neverAdmitted } from '../decision.js';
import { type OptionNames, requireInteger, requireOptions } from '../validate.js';
import { paramsResolver } from './params.js';
import { share } from './share.js';
import type { Algorithm } from './types.js';

/** Options of {@link fixedWindow}. */
export interface FixedWindowOptions {
  /** Units admitted per window. Integer ≥ 1. */
  limit: number;
  /** Window length, in milliseconds. Integer ≥ 1. */
  windowMs: number;
}

const MAX_PERIOD_MS = 10 * 365 * 24 * 3600 * 1000;

const FIXED_WINDOW_OPTION_NAMES: OptionNames<FixedWindowOptions> = { limit: true, windowMs: true };

/**
 * Fixed window: one counter per window of `windowMs`; a request of cost c is admitted when the
 * window's count plus c is at most `limit`. A key's window opens at its first admitted request
 * and the next one at the first admitted request after it closed, so windows are aligned to the
 * key's own traffic, never to the clock's origin (which differs between the memory store's
 * monotonic clock and Redis's epoch), and keys do not all reset at the same instant.
 *
 * State is two numbers per key: the count and the window's end (ms); 0 is a fresh key.
 *
 * Guarantees: at most `limit` units per window. Boundary behaviour: all of a window but its
 * opening request may be spent at its last millisecond and the next window's `limit` at the
 * first millisecond after, so up to 2 × limit − 1 units pass within 2 ms (and within any
 * `windowMs`); over any interval of length Δ at most `limit × (⌈Δ / windowMs⌉ + 1)`.
 * `retryAfterMs` is exact: the time until the window closes.
 *
 * Pros: the cheapest state; a quota that is easy to explain ("100 per minute, resets 60 s after
 * your first request"). Cons: the 2 × limit boundary burst; no gradual refill.
 *
 * @throws {ConfigError} when options is not an object, limit or windowMs is not a positive integer.
 * @example
 * ```ts
 * import { createMemoryLimiter, fixedWindow } from 'sluice';
 *
 * // 1,000 calls per hour, counted from each key's first call of the hour.
 * const limiter = createMemoryLimiter({ algorithm: fixedWindow({ limit: 1_000, windowMs: 3_600_000 }) });
 * const { remaining, resetAfterMs } = await limiter.limit('api-key:k1');
 * ```
 */
export function fixedWindow(options: FixedWindowOptions): Algorithm {
  requireOptions('fixedWindow options', options, FIXED_WINDOW_OPTION_NAMES);
  const limit = requireInteger('limit', options.limit);
  const windowMs = requireInteger('windowMs', options.windowMs, 1, MAX_PERIOD_MS);

  return {
    name: 'fixed-window',
    limit,
    horizonMs: windowMs,
    slots: 2,
    scriptParams: [limit, windowMs],
    replenish: 'window',
    // The same windows, each holding limit ÷ N.
    divide: (n) => fixedWindow({ limit: share(limit, n), windowMs }),
    withParams: paramsResolver('fixedWindow', ['limit', 'windowMs'], options, fixedWindow),
    decide(state, offset, nowMs, cost, commit) {
      let count = state[offset] as number;
      let endMs = state[offset + 1] as number;
      let t = nowMs;
      if (t >= endMs) {
        count = 0;
        endMs = t + windowMs;
      } else {
        t = Math.max(t, endMs - windowMs); // a clock behind the window's start counts in this window
      }
      // Through Math.max, a small integer: unoptimized code subtracting numbers read from the
      // state makes a heap number, and one stored in a decision boxes every later decision's numbers.
      const leftMs = Math.max(1, endMs - t);
      const decision = (allowed: boolean, used: number, retryAfterMs: number): Decision => ({
        allowed,
        limit,
        remaining: Math.max(0, limit - used), // below 0 only for a state written under a larger limit
        retryAfterMs,
        resetAfterMs: used > 0 ? leftMs : 0,
      });
      if (cost > limit) return neverAdmitted(decision(false, count, 0));
      if (count + cost > limit) return decision(false, count, leftMs);
      if (commit && cost > 0) {
        state[offset] = count + cost;
        state[offset + 1] = endMs;
      }
      return decision(true, count + cost, 0);
    },
    freshAtMs(state, offset) {
      return state[offset + 1] as number;
    },
    // Counts down the open window; a window counted down to 0 is a fresh key.
    reward(state, offset, nowMs, units) {
      if (nowMs >= (state[offset + 1] as number)) return;
      const count = Math.max(0, (state[offset] as number) - units);
      state[offset] = count;
      if (count === 0) state[offset + 1] = 0;
    },
    // Counts up the open window (opening one now if none is), as far as the limit: a full window
    // already denies until it ends, and a count past the limit would report remaining < 0.
    penalty(state, offset, nowMs, units) {
      if (nowMs >= (state[offset + 1] as number)) {
        state[offset] = 0;
        state[offset + 1] = nowMs + windowMs;
      }
      state[offset] = Math.min(limit, (state[offset] as number) + units);
    },
  };
}

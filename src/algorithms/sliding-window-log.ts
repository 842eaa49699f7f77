import type { Decision } from '../decision.js';
import { requireInteger } from '../validate.js';
import { share } from './share.js';
import type { Algorithm } from './types.js';

/** Options of {@link slidingWindowLog}. */
export interface SlidingWindowLogOptions {
  /** Units admitted in any window. Integer ≥ 1; the memory store holds `limit` timestamps per key. */
  limit: number;
  /** Window length, in milliseconds. Integer ≥ 1. */
  windowMs: number;
}

const MAX_PERIOD_MS = 10 * 365 * 24 * 3600 * 1000;
/** 8 MB of state per key in the memory store; a larger log belongs in Redis or in a counter. */
const MAX_LOG_LIMIT = 1_000_000;

/**
 * Sliding window log: remembers the time of every admitted unit and admits a request of cost c
 * at t when the units admitted in `(t − windowMs, t]` plus c are at most `limit`. Exact: no
 * interval of length `windowMs` ever holds more than `limit` units.
 *
 * Memory store: each key holds a ring of `limit` timestamps (one per admitted unit) plus its
 * length and head, `8 × (limit + 2)` bytes, reserved whether used or not, so the store's one
 * `Float64Array` layout holds it. Redis: a sorted set with one member per admitted request
 * (`stores/redis/scripts/sliding-window-log.ts`). Both are O(limit) per key: the cost of exactness.
 *
 * Boundary behaviour: none; `retryAfterMs` is exact: the time until enough of the oldest units
 * leave the window. A burst of `limit` at t is fully back at t + windowMs, all at once.
 *
 * Pros: exact over every interval; no boundary burst. Cons: memory and time per key grow with
 * `limit`; choose it for small limits that must never be exceeded (logins, payments).
 * Source: the Redis sorted-set log of seed 004, with members made unique without randomness.
 *
 * @throws {ConfigError} when limit (1..1,000,000) or windowMs is not a positive integer.
 */
export function slidingWindowLog(options: SlidingWindowLogOptions): Algorithm {
  const limit = requireInteger('limit', options.limit, 1, MAX_LOG_LIMIT);
  const windowMs = requireInteger('windowMs', options.windowMs, 1, MAX_PERIOD_MS);

  return {
    name: 'sliding-window-log',
    limit,
    horizonMs: windowMs,
    // [length, head, ring of `limit` timestamps, oldest first from head]
    slots: 2 + limit,
    scriptParams: [limit, windowMs],
    replenish: 'sliding',
    divide: (n) => slidingWindowLog({ limit: share(limit, n), windowMs }),
    decide(state, offset, nowMs, cost, commit) {
      const length = state[offset] as number;
      const head = state[offset + 1] as number;
      const at = (i: number): number => state[offset + 2 + ((head + i) % limit)] as number;
      const newestMs = length > 0 ? at(length - 1) : nowMs;
      const t = Math.max(nowMs, newestMs); // a clock behind the newest entry counts from that entry
      // Entries are in time order: binary search for the first still inside (t − windowMs, t].
      let expired = 0;
      for (let hi = length; expired < hi; ) {
        const mid = (expired + hi) >>> 1;
        if (at(mid) > t - windowMs) hi = mid;
        else expired = mid + 1;
      }
      const used = length - expired;
      const decision = (allowed: boolean, inWindow: number, lastMs: number, retryAfterMs: number): Decision => ({
        allowed,
        limit,
        remaining: limit - inWindow,
        retryAfterMs,
        resetAfterMs: inWindow > 0 ? lastMs + windowMs - t : 0,
      });
      if (cost > limit) return decision(false, used, newestMs, Number.POSITIVE_INFINITY);
      const excess = used + cost - limit;
      // Admitted once the oldest `excess` units in the window have left it.
      if (excess > 0) return decision(false, used, newestMs, at(expired + excess - 1) + windowMs - t);
      if (commit && cost > 0) {
        const start = (head + expired) % limit;
        for (let i = used; i < used + cost; i++) state[offset + 2 + ((start + i) % limit)] = t;
        state[offset] = used + cost;
        state[offset + 1] = start;
      }
      return decision(true, used + cost, cost > 0 ? t : newestMs, 0);
    },
    freshAtMs(state, offset) {
      const length = state[offset] as number;
      if (length === 0) return 0;
      return (state[offset + 2 + (((state[offset + 1] as number) + length - 1) % limit)] as number) + windowMs;
    },
  };
}

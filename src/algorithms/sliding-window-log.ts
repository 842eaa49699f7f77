import { type Decision, neverAdmitted } from '../decision.js';
import { type OptionNames, requireInteger, requireOptions } from '../validate.js';
import { paramsResolver } from './params.js';
import { spendHeld } from './partial.js';
import { share } from './share.js';
import type { Algorithm } from './types.js';

/** Options of {@link slidingWindowLog}. */
export interface SlidingWindowLogOptions {
  /** Units admitted in any window. Integer ≥ 1; the memory store holds up to `limit` timestamps per key. */
  limit: number;
  /** Window length, in milliseconds. Integer ≥ 1. */
  windowMs: number;
}

const MAX_PERIOD_MS = 10 * 365 * 24 * 3600 * 1000;
/** At most 8 MB of state per key in the memory store; a larger log belongs in Redis or in a counter. */
const MAX_LOG_LIMIT = 1_000_000;
/** [length, head] before the ring. */
const HEADER = 2;

const SLIDING_WINDOW_LOG_OPTION_NAMES: OptionNames<SlidingWindowLogOptions> = { limit: true, windowMs: true };

/**
 * Sliding window log: remembers the time of every admitted unit and admits a request of cost c
 * at t when the units admitted in `(t − windowMs, t]` plus c are at most `limit`. Exact: no
 * interval of length `windowMs` ever holds more than `limit` units.
 *
 * Memory store: each key holds a ring of timestamps (one per admitted unit in the window) plus its
 * length and head, in an array of its own that grows by doubling with the units the key holds,
 * up to `8 × (limit + 2)` bytes; the store's `maxBytes` bounds the sum over keys. Redis: a sorted
 * set with one member per millisecond with admissions (`stores/redis/scripts/sliding-window-log.ts`).
 * Both are O(limit) per key at worst: the cost of exactness.
 *
 * Boundary behaviour: none; `retryAfterMs` is exact: the time until enough of the oldest units
 * leave the window. A burst of `limit` at t is fully back at t + windowMs, all at once.
 *
 * Admin operations (docs/admin.md): `penalty(key, units)` adds entries at now as far as the
 * limit (as many as a partial admission of `units` would); `reward(key, units)` drops the newest
 * `units` entries in the window, never past empty: they would have left it last, so the units
 * given back stay given for a whole window, and a reward undoes a penalty of the same units.
 *
 * Pros: exact over every interval; no boundary burst. Cons: memory and time per key grow with
 * `limit`; choose it for small limits that must never be exceeded (logins, payments).
 * Source: the usual Redis sorted-set log (ZREMRANGEBYSCORE, ZCARD, ZADD), with members made unique without randomness.
 *
 * @throws {ConfigError} when options is not an object, limit (1..1,000,000) or windowMs is not a positive integer.
 * @example
 * ```ts
 * import { createMemoryLimiter, slidingWindowLog } from 'sluice';
 *
 * // 5 login attempts in any 15 minutes, never more.
 * const logins = createMemoryLimiter({ algorithm: slidingWindowLog({ limit: 5, windowMs: 15 * 60_000 }) });
 * const attempt = await logins.limit('login:alice@example.com');
 * ```
 */
export function slidingWindowLog(options: SlidingWindowLogOptions): Algorithm {
  requireOptions('slidingWindowLog options', options, SLIDING_WINDOW_LOG_OPTION_NAMES);
  const limit = requireInteger('limit', options.limit, 1, MAX_LOG_LIMIT);
  const windowMs = requireInteger('windowMs', options.windowMs, 1, MAX_PERIOD_MS);

  // State: [length, head, ring of timestamps, oldest first from head]. The ring is the rest of
  // the array, so a key holds only as many as the memory store gave it; not capped at `limit`,
  // so a state written under a larger per-call limit is still read in its own ring.
  const ringOf = (state: Float64Array, offset: number): number => state.length - offset - HEADER;
  const newestOf = (state: Float64Array, offset: number, length: number): number =>
    state[offset + HEADER + (((state[offset + 1] as number) + length - 1) % ringOf(state, offset))] as number;
  // Entries are in time order: binary search for the first still inside (t − windowMs, t].
  const expiredAt = (state: Float64Array, offset: number, length: number, t: number): number => {
    const head = state[offset + 1] as number;
    const ring = ringOf(state, offset);
    let expired = 0;
    for (let hi = length; expired < hi; ) {
      const mid = (expired + hi) >>> 1;
      if ((state[offset + HEADER + ((head + mid) % ring)] as number) > t - windowMs) hi = mid;
      else expired = mid + 1;
    }
    return expired;
  };

  const decide: Algorithm['decide'] = (state, offset, nowMs, cost, commit) => {
    const length = state[offset] as number;
    const head = state[offset + 1] as number;
    const ring = ringOf(state, offset);
    const at = (i: number): number => state[offset + HEADER + ((head + i) % ring)] as number;
    const newestMs = length > 0 ? at(length - 1) : nowMs;
    const t = Math.max(nowMs, newestMs); // a clock behind the newest entry counts from that entry
    const expired = expiredAt(state, offset, length, t);
    const used = length - expired;
    const decision = (allowed: boolean, inWindow: number, lastMs: number, retryAfterMs: number): Decision => ({
      allowed,
      limit,
      remaining: Math.max(0, limit - inWindow), // below 0 only for a state written under a larger limit
      retryAfterMs,
      resetAfterMs: inWindow > 0 ? lastMs + windowMs - t : 0,
    });
    if (cost > limit) return neverAdmitted(decision(false, used, newestMs, 0));
    const excess = used + cost - limit;
    // Admitted once the oldest `excess` units in the window have left it.
    if (excess > 0) return decision(false, used, newestMs, at(expired + excess - 1) + windowMs - t);
    if (commit && cost > 0) {
      if (used + cost > ring) throw new RangeError(`log state holds ${ring} entries, needs ${used + cost}`);
      const start = (head + expired) % ring;
      for (let i = used; i < used + cost; i++) state[offset + HEADER + ((start + i) % ring)] = t;
      state[offset] = used + cost;
      state[offset + 1] = start;
    }
    return decision(true, used + cost, cost > 0 ? t : newestMs, 0);
  };

  return {
    name: 'sliding-window-log',
    limit,
    horizonMs: windowMs,
    slots: HEADER + limit,
    growth: {
      freshSize: HEADER,
      sizeFor(state, offset, nowMs, cost) {
        const length = state[offset] as number;
        if (length === 0) return HEADER + Math.min(limit, cost);
        const t = Math.max(nowMs, newestOf(state, offset, length));
        return HEADER + Math.min(limit, length - expiredAt(state, offset, length, t) + cost);
      },
      resize(state, offset, size) {
        // Oldest first from index 0 of the new ring, so the ring's new size needs no other change.
        const next = new Float64Array(size);
        const length = state[offset] as number;
        const head = state[offset + 1] as number;
        const ring = ringOf(state, offset);
        for (let i = 0; i < length; i++) next[HEADER + i] = state[offset + HEADER + ((head + i) % ring)] as number;
        next[0] = length;
        return next;
      },
    },
    scriptParams: [limit, windowMs],
    replenish: 'sliding',
    divide: (n) => slidingWindowLog({ limit: share(limit, n), windowMs }),
    withParams: paramsResolver('slidingWindowLog', ['limit', 'windowMs'], options, slidingWindowLog),
    decide,
    freshAtMs(state, offset) {
      const length = state[offset] as number;
      return length === 0 ? 0 : newestOf(state, offset, length) + windowMs;
    },
    // Entries at now, as many as the log has room for under the limit (the memory store grows
    // the state for `units` first: `growth.sizeFor`).
    penalty(state, offset, nowMs, units) {
      spendHeld(units, (n, commit) => decide(state, offset, nowMs, n, commit));
    },
    // Drops the newest entries in the window, never past empty: they would have left it last,
    // so the reward lasts a whole window (the oldest may be about to leave anyway), and a
    // penalty then a reward of the same units leaves the log as it was.
    reward(state, offset, nowMs, units) {
      const length = state[offset] as number;
      if (length === 0) return;
      const expired = expiredAt(state, offset, length, Math.max(nowMs, newestOf(state, offset, length)));
      const kept = Math.max(0, length - expired - units);
      state[offset] = kept;
      state[offset + 1] = kept === 0 ? 0 : ((state[offset + 1] as number) + expired) % ringOf(state, offset);
    },
  };
}

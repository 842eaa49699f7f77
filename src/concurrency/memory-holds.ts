import { type Clock, monotonicClock, readClock } from '../limiter.js';
import { checkKey, type OptionNames, orDefault, requireFunction, requireInteger, requireOptions } from '../validate.js';
import { checkHoldId, checkHoldLimit, checkHoldMs } from './hold-arguments.js';
import type { HoldAnswer, HoldStore } from './types.js';

/** Options of {@link memoryHolds}. */
export interface MemoryHoldsOptions {
  /**
   * Most keys with holds kept at once (keys are often attacker-controlled). When full, keys whose
   * holds have all expired go first; when every key kept still has a live hold, a new key is
   * denied rather than a live key forgotten (forgetting it would admit past its limit).
   * Default 100,000.
   */
  maxKeys?: number;
  /** Milliseconds clock; default monotonic `performance.now()`. Read once per call. */
  clock?: Clock;
}

/** Keys looked at, from the least recently used end, for one whose holds have all expired. */
const EVICTION_SCAN = 16;

const MEMORY_HOLDS_OPTION_NAMES: OptionNames<MemoryHoldsOptions> = { maxKeys: true, clock: true };

/**
 * Holds in this process's memory: exact for one process (use {@link redisHolds} for a fleet).
 * Memory is bounded by `maxKeys` × the limiter's `limit` hold ids.
 *
 * @throws {ConfigError} when options is not an object, `maxKeys` is not an integer ≥ 1 or `clock`
 * not a function. Each method rejects with `InvalidKeyError` for a key a limiter would refuse.
 * @example
 * ```ts
 * import { createConcurrencyLimiter, memoryHolds } from 'sluice/concurrency';
 *
 * const reports = createConcurrencyLimiter({ limit: 5, holdMs: 30_000, store: memoryHolds({ maxKeys: 10_000 }) });
 * ```
 */
export function memoryHolds(options: MemoryHoldsOptions = {}): HoldStore {
  requireOptions('memoryHolds options', options, MEMORY_HOLDS_OPTION_NAMES);
  const maxKeys = requireInteger('maxKeys', orDefault(options.maxKeys, 100_000));
  const clock = requireFunction('clock', orDefault(options.clock, monotonicClock));
  // key → (hold id → expiry ms); Map order is recency order, oldest first.
  const keys = new Map<string, Map<string, number>>();

  const liveHolds = (key: string, nowMs: number): Map<string, number> | undefined => {
    const holds = keys.get(key);
    if (holds === undefined) return undefined;
    for (const [id, expiresAtMs] of holds) if (expiresAtMs <= nowMs) holds.delete(id);
    keys.delete(key);
    if (holds.size === 0) return undefined;
    keys.set(key, holds); // most recently used
    return holds;
  };
  // Makes room for one more key; returns 0, or when every key looked at still holds, the
  // milliseconds until the first of them frees.
  const makeRoom = (nowMs: number): number => {
    if (keys.size < maxKeys) return 0;
    let soonestMs = Number.POSITIVE_INFINITY;
    let scanned = 0;
    for (const [key, holds] of keys) {
      const lastMs = extreme(holds, Math.max);
      if (lastMs <= nowMs) {
        keys.delete(key);
        return 0;
      }
      soonestMs = Math.min(soonestMs, lastMs - nowMs);
      if (++scanned === EVICTION_SCAN) break;
    }
    return soonestMs;
  };

  return {
    async acquire(key, id, limit, holdMs): Promise<HoldAnswer> {
      checkKey(key);
      checkHoldId(id);
      checkHoldLimit(limit);
      checkHoldMs(holdMs);
      const nowMs = readClock(clock);
      let holds = liveHolds(key, nowMs);
      if (holds === undefined) {
        const waitMs = makeRoom(nowMs);
        if (waitMs > 0) return { granted: false, held: 0, retryAfterMs: waitMs };
        holds = new Map();
        keys.set(key, holds);
      }
      if (holds.size >= limit) {
        return { granted: false, held: holds.size, retryAfterMs: extreme(holds, Math.min) - nowMs };
      }
      holds.set(id, nowMs + holdMs);
      return { granted: true, held: holds.size, retryAfterMs: 0 };
    },
    async renew(key, id, holdMs) {
      checkKey(key);
      checkHoldId(id);
      checkHoldMs(holdMs);
      const nowMs = readClock(clock);
      const holds = liveHolds(key, nowMs);
      if (holds?.has(id) !== true) return false;
      holds.set(id, nowMs + holdMs);
      return true;
    },
    async release(key, id) {
      checkKey(key);
      checkHoldId(id);
      const holds = keys.get(key);
      if (holds?.delete(id) && holds.size === 0) keys.delete(key);
    },
    async held(key) {
      checkKey(key);
      return liveHolds(key, readClock(clock))?.size ?? 0;
    },
  };
}

/** The earliest (`Math.min`) or latest (`Math.max`) expiry of a key's holds; a loop, as a key may hold many. */
function extreme(holds: Map<string, number>, pick: (a: number, b: number) => number): number {
  let found: number | undefined;
  for (const expiresAtMs of holds.values()) found = found === undefined ? expiresAtMs : pick(found, expiresAtMs);
  return found as number;
}

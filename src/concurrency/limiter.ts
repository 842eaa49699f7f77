import { ConfigError } from '../errors.js';
import { monotonicClock } from '../limiter.js';
import {
  checkKey,
  type OptionNames,
  orDefault,
  requireDurationMs,
  requireInteger,
  requireOptions,
} from '../validate.js';
import { type Hold, openHold } from './hold.js';
import { memoryHolds } from './memory-holds.js';
import type { HoldStore } from './types.js';

/** Options of {@link createConcurrencyLimiter}. */
export interface ConcurrencyLimiterOptions {
  /** Most holds of one key live at once. Integer ≥ 1. */
  limit: number;
  /** Milliseconds a hold lives unless renewed: how long a crashed holder's slot stays taken. Integer in 1..2^31 − 1. */
  holdMs: number;
  /** Where holds live: {@link memoryHolds} (default, this process) or {@link redisHolds} (the fleet). */
  store?: HoldStore;
  /**
   * Milliseconds between automatic renewals of each open hold (one store call each, an unref'd
   * timer), so work longer than `holdMs` keeps its slot while its process lives. 0 (default):
   * off, renew by hand. Integer below `holdMs`; a third of it leaves room for two failed renewals.
   */
  heartbeatMs?: number;
}

/** The answer to "may this key start one more piece of work now?". */
export type Acquisition =
  | { readonly allowed: true; readonly hold: Hold; readonly limit: number; readonly held: number }
  | { readonly allowed: false; readonly limit: number; readonly held: number; readonly retryAfterMs: number };

/** Caps work in flight per key: see {@link createConcurrencyLimiter}. */
export interface ConcurrencyLimiter {
  readonly limit: number;
  readonly holdMs: number;
  /**
   * Takes one of `key`'s `limit` slots if one is free. Granted: `hold` (release it when the work
   * ends), `held` the key's live holds counting it. Denied: nothing was taken; `retryAfterMs` is
   * the time until the key's earliest hold expires if nobody releases or renews first (a memory
   * store full of live keys denies a new key with `held` 0).
   * @throws {InvalidKeyError} for a key that is not a non-empty, well-formed string of ≤ 512 UTF-8 bytes.
   * @throws {StoreUnavailableError} when a Redis store cannot answer (nothing is known to be held).
   */
  acquire(key: string): Promise<Acquisition>;
  /** Live holds of `key` now, whoever holds them. */
  held(key: string): Promise<number>;
  /** Stops every heartbeat and releases every hold this limiter granted and is still open. Idempotent. */
  close(): Promise<void>;
}

const CONCURRENCY_LIMITER_OPTION_NAMES: OptionNames<ConcurrencyLimiterOptions> = {
  limit: true,
  holdMs: true,
  store: true,
  heartbeatMs: true,
};

/**
 * A concurrency (in-flight) limit: at most `limit` holds per key at once, each freed by
 * `release()` or, if its holder dies, by expiring `holdMs` after its last renewal. With
 * {@link redisHolds} the limit is exact across every process sharing the Redis: one atomic script
 * per acquire and per release, expiry on the server's clock.
 *
 * @example
 * ```ts
 * import { createConcurrencyLimiter } from 'sluice/concurrency';
 *
 * const reports = createConcurrencyLimiter({ limit: 5, holdMs: 30_000, heartbeatMs: 10_000 });
 * const acquired = await reports.acquire('customer-42');
 * if (acquired.allowed) {
 *   try {
 *     // generate the report
 *   } finally {
 *     await acquired.hold.release();
 *   }
 * }
 * ```
 *
 * @throws {ConfigError} naming the option: options not an object, `limit` not an integer ≥ 1,
 * `holdMs` or `heartbeatMs` not a whole number of ms, `heartbeatMs` not below `holdMs`, `store`
 * not a hold store.
 */
export function createConcurrencyLimiter(options: ConcurrencyLimiterOptions): ConcurrencyLimiter {
  requireOptions('createConcurrencyLimiter options', options, CONCURRENCY_LIMITER_OPTION_NAMES);
  const limit = requireInteger('limit', options.limit);
  const holdMs = requireDurationMs('holdMs', options.holdMs);
  const heartbeatMs = requireDurationMs('heartbeatMs', orDefault(options.heartbeatMs, 0), 0);
  if (heartbeatMs >= holdMs) throw new ConfigError(`heartbeatMs must be below holdMs (${holdMs}), got ${heartbeatMs}`);
  const store = requireHoldStore(options.store === undefined ? memoryHolds() : options.store);
  const open = new Set<Hold>();
  const settings = { store, holdMs, heartbeatMs, clock: monotonicClock, open };

  return {
    limit,
    holdMs,
    async acquire(key) {
      checkKey(key);
      const id = crypto.randomUUID();
      const sentAtMs = settings.clock();
      const answer = await store.acquire(key, id, limit, holdMs);
      if (!answer.granted) return { allowed: false, limit, held: answer.held, retryAfterMs: answer.retryAfterMs };
      return { allowed: true, hold: openHold(key, id, sentAtMs, settings), limit, held: answer.held };
    },
    async held(key) {
      checkKey(key);
      return store.held(key);
    },
    async close() {
      await Promise.allSettled([...open].map((hold) => hold.release()));
    },
  };
}

function requireHoldStore(value: unknown): HoldStore {
  const store = value as Partial<HoldStore> | null;
  for (const method of ['acquire', 'renew', 'release', 'held'] as const) {
    if (typeof store?.[method] !== 'function') {
      throw new ConfigError('store must be a hold store: memoryHolds() or redisHolds({ client })');
    }
  }
  return store as HoldStore;
}

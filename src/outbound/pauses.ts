import { StoreUnavailableError } from '../errors.js';
import { toScriptClient } from '../stores/redis/client.js';
import { checkPrefix, redisKeyName } from '../stores/redis/key-name.js';
import { defineScript, runScript } from '../stores/redis/script.js';
import { checkKey } from '../validate.js';

/**
 * Where a pause learned from an upstream is kept so that every process waiting on the key sees
 * it: a key with a TTL in the shared store. Read once per wake-up of a key's queue (one call per
 * batch of admissions, not per call), written once per pause.
 */
export interface PauseStore {
  /** Pauses `key` for `durationMs` from now; a pause already running longer is kept. */
  pause(key: string, durationMs: number): Promise<void>;
  /** Milliseconds until `key`'s pause ends; 0 when it is not paused. Rejects when the store cannot answer. */
  pausedForMs(key: string): Promise<number>;
  /** Ends `key`'s pause (none: nothing changes). Without it, an acquirer's `resume` lifts only its own pause and the limiter's block. */
  resume?(key: string): Promise<void>;
}

/** Options of {@link createRedisPauseStore}. */
export interface RedisPauseStoreOptions {
  /** An ioredis/iovalkey or node-redis client (or a ScriptClient), as for `createRedisLimiter`. Not closed by Sluice. */
  client: unknown;
  /**
   * Prefix of every pause key, stored as `prefix + '{' + key + '}'` like the limiter's (`%` in the
   * key written `%25`, `}` written `%7D`). No `{` or `}` (`ConfigError`). Default `'sluice:pause:'`.
   */
  prefix?: string;
}

// Hashed once at load (Web Crypto is async). KEYS[1] the pause key; ARGV[1] the pause in ms. The longer of the running and the new pause wins.
const pauseScript = defineScript(`
local left = redis.call('PTTL', KEYS[1])
if left < tonumber(ARGV[1]) then redis.call('SET', KEYS[1], '1', 'PX', ARGV[1]) end
return 0`);
// KEYS[1] the pause key. PTTL: -2 when absent (no pause), -1 never (every write sets a TTL).
const readScript = defineScript(`return redis.call('PTTL', KEYS[1])`);
// KEYS[1] the pause key, deleted: the pause ends for every process at its next read.
const resumeScript = defineScript(`redis.call('DEL', KEYS[1])
return 0`);

/**
 * A {@link PauseStore} in Redis: one key per paused key with a TTL of the pause, so it vanishes
 * by itself, or `resume` deletes it. Its calls reject with `StoreUnavailableError` when Redis
 * cannot answer; an acquirer then keeps what it knew (the upstream's next 429 says again).
 *
 * @throws {ConfigError} on an unusable client, or a `prefix` that is not a string or holds `{` or `}`.
 * @example
 * ```ts
 * import { Redis } from 'ioredis';
 * import { createRedisLimiter } from 'sluice/redis';
 * import { gcra } from 'sluice';
 * import { createAcquirer, createRedisPauseStore } from 'sluice/outbound';
 *
 * const client = new Redis();
 * const limiter = createRedisLimiter({ client, algorithm: gcra({ limit: 10, periodMs: 1000 }) });
 * const acquirer = createAcquirer(limiter, { pauses: createRedisPauseStore({ client }) });
 * ```
 */
export function createRedisPauseStore(options: RedisPauseStoreOptions): PauseStore {
  const client = toScriptClient(options.client);
  const prefix = checkPrefix(options.prefix ?? 'sluice:pause:');
  const redisKeyOf = (key: string) => {
    checkKey(key);
    return redisKeyName(prefix, key);
  };
  return {
    async pause(key, durationMs) {
      const ms = Math.ceil(durationMs);
      if (!(ms > 0)) return;
      await runScript(client, await pauseScript, [redisKeyOf(key)], [ms]).catch((error: unknown) => {
        throw new StoreUnavailableError('Redis could not store the pause', error);
      });
    },
    async pausedForMs(key) {
      const left = await runScript(client, await readScript, [redisKeyOf(key)], []).catch((error: unknown) => {
        throw new StoreUnavailableError('Redis could not read the pause', error);
      });
      return typeof left === 'number' && left > 0 ? left : 0;
    },
    async resume(key) {
      await runScript(client, await resumeScript, [redisKeyOf(key)], []).catch((error: unknown) => {
        throw new StoreUnavailableError('Redis could not end the pause', error);
      });
    },
  };
}

/** A {@link PauseStore} in this process's memory: shared by the acquirers of one process only. * @example
 * ```ts
 * import { createMemoryLimiter, gcra } from 'sluice';
 * import { createAcquirer, createMemoryPauseStore } from 'sluice/outbound';
 *
 * const limiter = createMemoryLimiter({ algorithm: gcra({ limit: 10, periodMs: 1000 }) });
 * const acquirer = createAcquirer(limiter, { pauses: createMemoryPauseStore() });
 * ```
 */
export function createMemoryPauseStore(now: () => number = () => performance.now()): PauseStore {
  const ends = new Map<string, number>();
  return {
    async pause(key, durationMs) {
      checkKey(key);
      ends.set(key, Math.max(ends.get(key) ?? 0, now() + durationMs));
    },
    async pausedForMs(key) {
      checkKey(key);
      const left = (ends.get(key) ?? 0) - now();
      if (left > 0) return left;
      ends.delete(key);
      return 0;
    },
    async resume(key) {
      checkKey(key);
      ends.delete(key);
    },
  };
}

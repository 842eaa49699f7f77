import { StoreUnavailableError } from '../errors.js';
import { toScriptClient } from '../stores/redis/client.js';
import { checkPrefix, redisKeyName } from '../stores/redis/key-name.js';
import { runScript } from '../stores/redis/script.js';
import { checkKey, type OptionNames, orDefault, requireOptions } from '../validate.js';
import { checkHoldId, checkHoldLimit, checkHoldMs } from './hold-arguments.js';
import { acquireScript, heldScript, renewOrReleaseScript } from './redis-scripts.js';
import type { HoldStore } from './types.js';

/** Options of {@link redisHolds}. */
export interface RedisHoldsOptions {
  /** An ioredis/iovalkey `Redis` or `Cluster`, a node-redis client, or a `ScriptClient`. Not closed by Sluice. */
  client: unknown;
  /**
   * Prefix of every Redis key; a key's holds are stored as `prefix + '{' + key + '}'` (one hash
   * slot per key on a Cluster), with `%` in the key written `%25` and `}` written `%7D`. No `{`
   * or `}` (`ConfigError`). Default `'sluice:holds:'`.
   */
  prefix?: string;
}

const REDIS_HOLDS_OPTION_NAMES: OptionNames<RedisHoldsOptions> = { client: true, prefix: true };

/**
 * Holds in Redis, shared by every process using the same Redis and prefix: one sorted set per key
 * (hold id → expiry on the server's `TIME`), one script call per acquire, renewal or release.
 *
 * @throws {ConfigError} when options is not an object, `client` is not a Redis client, or
 * `prefix` is not a string or holds `{` or `}`. Each method rejects with `InvalidKeyError` for a
 * key a limiter would refuse, before any I/O.
 * @example
 * ```ts
 * import { Redis } from 'ioredis';
 * import { createConcurrencyLimiter, redisHolds } from 'sluice/concurrency';
 *
 * const store = redisHolds({ client: new Redis(), prefix: 'app:holds:' });
 * const reports = createConcurrencyLimiter({ limit: 5, holdMs: 30_000, store });
 * ```
 */
export function redisHolds(options: RedisHoldsOptions): HoldStore {
  requireOptions('redisHolds options', options, REDIS_HOLDS_OPTION_NAMES);
  const client = toScriptClient(options.client);
  const prefix = checkPrefix(orDefault(options.prefix, 'sluice:holds:'));
  // Checked here, not only by the limiter: the store's own methods are public too.
  const redisKey = (key: string) => {
    checkKey(key);
    return redisKeyName(prefix, key);
  };
  const failedTo = (action: string) => (error: unknown) => {
    throw new StoreUnavailableError(`Redis could not ${action} a hold`, error);
  };
  const integers = (reply: unknown, length: number): number[] => {
    if (Array.isArray(reply) && reply.length >= length && reply.every(Number.isInteger)) return reply;
    if (Number.isInteger(reply) && length === 1) return [reply as number];
    throw new StoreUnavailableError(`unreadable hold script reply: ${JSON.stringify(reply)}`);
  };

  return {
    async acquire(key, id, limit, holdMs) {
      const keys = [redisKey(key)];
      checkHoldId(id);
      checkHoldLimit(limit);
      checkHoldMs(holdMs);
      const reply = await runScript(client, acquireScript, keys, [limit, holdMs, id]).catch(failedTo('acquire'));
      const [granted, held, retryAfterMs = 0] = integers(reply, 2);
      return { granted: granted === 1, held: held as number, retryAfterMs };
    },
    async renew(key, id, holdMs) {
      const keys = [redisKey(key)];
      checkHoldId(id);
      // Checked here above all: the script takes a holdMs of 0 for a release.
      checkHoldMs(holdMs);
      const reply = await runScript(client, renewOrReleaseScript, keys, [id, holdMs]).catch(failedTo('renew'));
      return integers(reply, 1)[0] === 1;
    },
    async release(key, id) {
      const keys = [redisKey(key)];
      checkHoldId(id);
      const reply = await runScript(client, renewOrReleaseScript, keys, [id, 0]).catch(failedTo('release'));
      integers(reply, 1);
    },
    async held(key) {
      const reply = await runScript(client, heldScript, [redisKey(key)], []).catch(failedTo('count'));
      return integers(reply, 1)[0] as number;
    },
  };
}

import { divideAlgorithm } from '../algorithms/divide.js';
import type { Algorithm } from '../algorithms/types.js';
import type { Decision, LimitOptions, ParamsOptions } from '../decision.js';
import { ConfigError, InvalidParamsError } from '../errors.js';
import type { Invalidations, Limiter } from '../limiter.js';
import {
  checkKey,
  costOf,
  type OptionNames,
  requireAlgorithm,
  requireFunction,
  requireInteger,
  requireLimiter,
  requireOptions,
} from '../validate.js';

/** Options of {@link createShardedLimiter}. */
export interface ShardedLimiterOptions {
  /** The whole limit of one key, e.g. `gcra({ limit: 50_000, periodMs: 1_000 })`. */
  algorithm: Algorithm;
  /** Sub-keys k each key is split over. Integer in 2..1024, at most the algorithm's burst. */
  shards: number;
  /**
   * Builds the limiter that holds every sub-key, given the algorithm holding one shard's share
   * (rate ÷ k, burst ÷ k): usually `(algorithm) => createRedisLimiter({ client, algorithm })`.
   */
  create(shardAlgorithm: Algorithm): Limiter;
}

const MAX_SHARDS = 1024;

const SHARDED_LIMITER_OPTION_NAMES: OptionNames<ShardedLimiterOptions> = {
  algorithm: true,
  shards: true,
  create: true,
};

/**
 * Hot-key sharding: one key's limit split over k sub-keys `key#0 … key#(k−1)`, each holding
 * rate ÷ k and burst ÷ k, each with its own hash tag so a Redis Cluster spreads them over its
 * masters. Calls go to the sub-keys in turn (round robin from a random start per process), so
 * one key's decisions no longer queue on one Redis thread. Still one round trip per decision.
 *
 * Accuracy, for GCRA with burst B and emission interval T:
 * - never over-admits: over any interval Δ the sub-keys together admit at most
 *   k·⌊B/k⌋ + k·⌊Δ/(k·T)⌋ ≤ B + ⌊Δ/T⌋ units, the unsharded bound;
 * - may under-admit: a request is denied when its sub-key is empty even if another holds
 *   units (uneven costs or callers make the shards drift apart), the first burst is
 *   k·⌊B/k⌋ (B mod k units are lost), and a single call can cost at most ⌊B/k⌋;
 * - `remaining` is the sub-key's remaining × k and `retryAfterMs` the sub-key's: estimates.
 * `peek` reads every sub-key (k round trips) and reports their sum as `remaining`.
 * Per-call `params` are refused (`limit` and `peek` reject with `InvalidParamsError`): a sub-key
 * holds the limit ÷ k, so a plan's whole numbers there would admit k × the plan.
 *
 * Keys may be at most 512 bytes minus the suffix (`#` and the shard's digits).
 *
 * @throws {ConfigError} when `shards` is not an integer in 2..1024 or exceeds the burst, or
 * the algorithm has no divided form (GCRA has).
 * @example
 * ```ts
 * import type { Cluster } from 'ioredis';
 * import { createShardedLimiter, gcra } from 'sluice';
 * import { createRedisLimiter } from 'sluice/redis';
 *
 * declare const cluster: Cluster;
 * // 50,000 per second on one hot key, spread over 8 sub-keys (and so over the Cluster's masters).
 * const limiter = createShardedLimiter({
 *   algorithm: gcra({ limit: 50_000, periodMs: 1_000 }),
 *   shards: 8,
 *   create: (algorithm) => createRedisLimiter({ client: cluster, algorithm }),
 * });
 * const decision = await limiter.limit('api:global');
 * ```
 */
export function createShardedLimiter(options: ShardedLimiterOptions): Limiter {
  requireOptions('createShardedLimiter options', options, SHARDED_LIMITER_OPTION_NAMES);
  const algorithm = requireAlgorithm('algorithm', options.algorithm);
  const shards = requireInteger('shards', options.shards, 2, MAX_SHARDS);
  const create = requireFunction('create', options.create);
  if (shards > algorithm.limit) {
    throw new ConfigError(
      `shards (${shards}) must not exceed the burst (${algorithm.limit}): each sub-key needs 1 unit`,
    );
  }
  const inner = requireLimiter('what create returned', create(divideAlgorithm(algorithm, shards)));
  const limit = inner.algorithm.limit * shards;
  let next = Math.floor(Math.random() * shards);
  const subKey = (key: string, shard: number) => `${key}#${shard}`;
  const whole = (decision: Decision, remaining: number): Decision => ({
    ...decision,
    limit,
    remaining: Math.min(limit, remaining),
  });

  const everyShard = (key: string, run: (subKey: string, shard: number) => Promise<void> | undefined) => {
    checkKey(key);
    return Promise.all(Array.from({ length: shards }, (_, shard) => run(subKey(key, shard), shard))).then(() => {});
  };
  // Units spread over the shards: ⌊units ÷ k⌋ each, one more on the first units mod k.
  const share = (units: number, shard: number) => Math.floor(units / shards) + (shard < units % shards ? 1 : 0);
  const sharded: Limiter = {
    algorithm,
    async limit(key: string, limitOptions?: LimitOptions) {
      checkKey(key);
      noParams(limitOptions);
      next = (next + 1) % shards;
      const decision = await inner.limit(subKey(key, next), limitOptions);
      return whole(decision, decision.remaining * shards);
    },
    async peek(key: string, peekOptions?: ParamsOptions) {
      checkKey(key);
      noParams(peekOptions);
      const decisions = await Promise.all(Array.from({ length: shards }, (_, shard) => inner.peek(subKey(key, shard))));
      const total = decisions.reduce((sum, decision) => sum + decision.remaining, 0);
      return whole(decisions[(next + 1) % shards] as Decision, total);
    },
    async reset(key: string) {
      checkKey(key);
      await Promise.all(Array.from({ length: shards }, (_, shard) => inner.reset(subKey(key, shard))));
    },
    close: () => inner.close(),
  };
  const { block, unblock, penalty, reward, invalidate, invalidations } = inner;
  if (block) sharded.block = (key, ms) => everyShard(key, (sub) => block.call(inner, sub, ms));
  if (unblock) sharded.unblock = (key) => everyShard(key, (sub) => unblock.call(inner, sub));
  if (invalidate) sharded.invalidate = (key) => everyShard(key, (sub) => invalidate.call(inner, sub));
  if (penalty) {
    sharded.penalty = (key, units) =>
      everyShard(key, (sub, shard) => penalty.call(inner, sub, share(costOf({ cost: units }), shard)));
  }
  if (reward) {
    sharded.reward = (key, units) =>
      everyShard(key, (sub, shard) => reward.call(inner, sub, share(costOf({ cost: units }), shard)));
  }
  return invalidations ? { ...sharded, invalidations: ofWholeKeys(invalidations) } : sharded;
}

/** Invalidations of sub-keys, heard as invalidations of their key. */
function ofWholeKeys(invalidations: Invalidations): Invalidations {
  const whole = (key: string | undefined) => {
    const at = key === undefined ? -1 : key.lastIndexOf('#');
    return at === -1 ? key : key?.slice(0, at);
  };
  const wholeKeys: Omit<Invalidations, 'live'> = {
    subscribe: (listener) => invalidations.subscribe((key, change) => listener(whole(key), change)),
  };
  // Defined after the literal: a getter inside it would put the object in V8's dictionary mode,
  // and a leased limiter reads `live` on every refusal.
  return Object.defineProperty(wholeKeys, 'live', {
    get: () => invalidations.live,
    enumerable: true,
    configurable: true,
  }) as Invalidations;
}

/** The sub-keys hold the limit ÷ shards: a plan's whole numbers there would admit shards × the plan. */
function noParams(options: ParamsOptions | undefined): void {
  if (options?.params !== undefined) throw new InvalidParamsError('a sharded limiter takes no per-call params');
}

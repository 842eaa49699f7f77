export type { BatchOptions } from './stores/redis/batch.js';
export {
  fromIoredis,
  fromNodeRedis,
  type IoredisLike,
  isClusterClient,
  type NodeRedisEvalOptions,
  type NodeRedisLike,
  toScriptClient,
} from './stores/redis/client.js';
export { CLUSTER_SLOTS, keySlot } from './stores/redis/keyslot.js';
export { createRedisLimiter, type RedisLimiterOptions } from './stores/redis/redis-limiter.js';
export {
  type ClientWrapper,
  defineScript,
  type LuaScript,
  runScript,
  type ScriptClient,
  type StoreOperation,
} from './stores/redis/script.js';
export { createShardedLimiter, type ShardedLimiterOptions } from './stores/redis/shard.js';

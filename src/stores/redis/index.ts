export type { BatchOptions } from './batch.js';
export {
  fromIoredis,
  fromNodeRedis,
  type IoredisLike,
  isClusterClient,
  type NodeRedisEvalOptions,
  type NodeRedisLike,
  toScriptClient,
} from './client.js';
export { createHeartbeat, type Heartbeat, type HeartbeatOptions, type HeartbeatStats } from './heartbeat.js';
export { CLUSTER_SLOTS, keySlot } from './keyslot.js';
export { createRedisLimiter, type RedisLimiterOptions } from './redis-limiter.js';
export {
  type ClientWrapper,
  defineScript,
  type LuaScript,
  runScript,
  type ScriptClient,
  type StoreOperation,
} from './script.js';

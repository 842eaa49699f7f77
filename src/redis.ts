export { fromIoredis, type IoredisLike, toScriptClient } from './stores/redis/client.js';
export { createRedisLimiter, type RedisLimiterOptions } from './stores/redis/redis-limiter.js';
export { defineScript, type LuaScript, runScript, type ScriptClient } from './stores/redis/script.js';

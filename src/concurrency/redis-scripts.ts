import type { LuaScript } from '../stores/redis/script.js';
import { shippedScript } from '../stores/redis/scripts/compose.js';

/*
 * Holds of one key: a sorted set of hold ids scored by expiry (epoch ms on the server's clock,
 * from TIME), under a TTL of the time until its last hold expires. A hold whose score is at or
 * before now is expired: every script drops those before it counts, so a crashed holder's slot
 * frees by itself. Integers only across the boundary (Redis truncates Lua floats in replies).
 * Each is committed as src/stores/redis/lua/holds.<name>.lua with its SHA-1 in shas.ts
 * (`npm run lua:snapshots`), so nothing hashes at run time.
 */
const NOW = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
-- The key lives until its last hold expires.
local function expire_with_last_hold()
  local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')[2]
  if last then redis.call('PEXPIRE', KEYS[1], tonumber(last) - now) end
end
`;

/** Acquire: one hold of one key, if fewer than the limit are live. */
export const acquireScript: LuaScript = shippedScript(
  'holds.acquire',
  `-- Holds: acquire. From src/concurrency/redis-scripts.ts (npm run lua:snapshots).
--
-- KEYS[1]  the key's sorted set: hold id -> expiry, server ms
-- ARGV[1]  limit: most live holds
-- ARGV[2]  holdMs: how long the new hold lives unless renewed
-- ARGV[3]  the new hold's id
-- Reply    {1, held} when granted; {0, held, ms until the earliest hold expires} when denied
${NOW}
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local held = redis.call('ZCARD', KEYS[1])
if held >= tonumber(ARGV[1]) then
  local earliest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')[2]
  return {0, held, tonumber(earliest) - now}
end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[3])
expire_with_last_hold()
return {1, held + 1}
`,
);

/** Renew or release one hold. */
export const renewOrReleaseScript: LuaScript = shippedScript(
  'holds.renew-or-release',
  `-- Holds: renew or release. From src/concurrency/redis-scripts.ts (npm run lua:snapshots).
--
-- KEYS[1]  the key's sorted set: hold id -> expiry, server ms
-- ARGV[1]  the hold's id
-- ARGV[2]  holdMs to renew for, or 0 to release
-- Reply    1 when the hold was live (and is now renewed or released), 0 when it had expired or
--          was released already (a renewal then writes nothing: its slot may be someone else's)
${NOW}
local hold_ms = tonumber(ARGV[2])
if hold_ms == 0 then return redis.call('ZREM', KEYS[1], ARGV[1]) end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], 'XX', now + hold_ms, ARGV[1])
expire_with_last_hold()
return 1
`,
);

/** Live holds of a key, read-only. */
export const heldScript: LuaScript = shippedScript(
  'holds.held',
  `-- Holds: count the live ones, read-only. From src/concurrency/redis-scripts.ts (npm run lua:snapshots).
--
-- KEYS[1]  the key's sorted set: hold id -> expiry, server ms
-- Reply    the count of holds expiring after now
${NOW}
return redis.call('ZCOUNT', KEYS[1], '(' .. now, '+inf')
`,
);

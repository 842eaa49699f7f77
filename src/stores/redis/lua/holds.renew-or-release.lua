-- Holds: renew or release. From src/concurrency/redis-scripts.ts (npm run lua:snapshots).
--
-- KEYS[1]  the key's sorted set: hold id -> expiry, server ms
-- ARGV[1]  the hold's id
-- ARGV[2]  holdMs to renew for, or 0 to release
-- Reply    1 when the hold was live (and is now renewed or released), 0 when it had expired or
--          was released already (a renewal then writes nothing: its slot may be someone else's)
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
-- The key lives until its last hold expires.
local function expire_with_last_hold()
  local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')[2]
  if last then redis.call('PEXPIRE', KEYS[1], tonumber(last) - now) end
end

local hold_ms = tonumber(ARGV[2])
if hold_ms == 0 then return redis.call('ZREM', KEYS[1], ARGV[1]) end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], 'XX', now + hold_ms, ARGV[1])
expire_with_last_hold()
return 1

-- Holds: count the live ones, read-only. From src/concurrency/redis-scripts.ts (npm run lua:snapshots).
--
-- KEYS[1]  the key's sorted set: hold id -> expiry, server ms
-- Reply    the count of holds expiring after now
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
-- The key lives until its last hold expires.
local function expire_with_last_hold()
  local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')[2]
  if last then redis.call('PEXPIRE', KEYS[1], tonumber(last) - now) end
end

return redis.call('ZCOUNT', KEYS[1], '(' .. now, '+inf')

-- Holds: acquire. From src/concurrency/redis-scripts.ts (npm run lua:snapshots).
--
-- KEYS[1]  the key's sorted set: hold id -> expiry, server ms
-- ARGV[1]  limit: most live holds
-- ARGV[2]  holdMs: how long the new hold lives unless renewed
-- ARGV[3]  the new hold's id
-- Reply    {1, held} when granted; {0, held, ms until the earliest hold expires} when denied
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
-- The key lives until its last hold expires.
local function expire_with_last_hold()
  local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')[2]
  if last then redis.call('PEXPIRE', KEYS[1], tonumber(last) - now) end
end

redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local held = redis.call('ZCARD', KEYS[1])
if held >= tonumber(ARGV[1]) then
  local earliest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')[2]
  return {0, held, tonumber(earliest) - now}
end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[3])
expire_with_last_hold()
return {1, held + 1}

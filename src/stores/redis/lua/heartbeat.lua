-- The heartbeat registry: live instances of a fleet, for the local fallback's limit / N.
-- Source: src/stores/redis/scripts/heartbeat.ts (npm run lua:snapshots).
--
-- KEYS[1]  a sorted set of instance ids scored by their last beat (epoch ms), hash-tagged
-- ARGV[1]  now, ms; '' for the server's TIME (one clock for the whole fleet)
-- ARGV[2]  this instance's id
-- ARGV[3]  ttl, ms: a beat older than this belongs to a dead instance
-- ARGV[4]  '1' to beat, '0' to leave (on close)
-- Reply    the number of live instances, integer
local now = tonumber(ARGV[1])
if not now then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local ttl = tonumber(ARGV[3])
if ARGV[4] == '1' then
  redis.call('ZADD', KEYS[1], string.format('%.0f', now), ARGV[2])
else
  redis.call('ZREM', KEYS[1], ARGV[2])
end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', string.format('%.0f', now - ttl))
local live = redis.call('ZCARD', KEYS[1])
-- The set lives as long as its newest beat; an empty set is already gone.
if live > 0 then redis.call('PEXPIRE', KEYS[1], ttl) end
return live

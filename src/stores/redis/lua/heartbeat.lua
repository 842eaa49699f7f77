
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

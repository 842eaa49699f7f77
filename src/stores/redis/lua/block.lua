-- block(key, ms): denies every decision of a key until now + ms, whatever its algorithm,
-- keeping a block that runs longer; tells every instance.
-- Source: src/stores/redis/scripts/block.ts (npm run lua:snapshots).
--
-- KEYS[1]  the key's state; its block is KEYS[1]..':block': the block's end, ms on the
--          decisions' clock, with a TTL of the block
-- ARGV[1]  now, ms; '' for the server's TIME
-- ARGV[2]  the block, ms (an integer >= 1)
-- ARGV[3]  the invalidation channel, ARGV[4] its message
-- Reply    1
local now_ms = tonumber(ARGV[1])
if not now_ms then
  local t = redis.call('TIME')
  now_ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local block = KEYS[1] .. ':block'
local ms = tonumber(ARGV[2])
local block_end = tonumber(redis.call('GET', block))
if not block_end or block_end < now_ms + ms then
  redis.call('SET', block, now_ms + ms, 'PX', ms)
end
redis.call('PUBLISH', ARGV[#ARGV - 1], ARGV[#ARGV])
return 1

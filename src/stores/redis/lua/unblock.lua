-- unblock(key): ends a key's block; tells every instance. With no key, only tells (invalidate).
-- Source: src/stores/redis/scripts/block.ts (npm run lua:snapshots).
--
-- KEYS[1]  the key's block, or none
-- ARGV[1]  the invalidation channel, ARGV[2] its message
-- Reply    the number of keys deleted
local deleted = 0
if #KEYS > 0 then deleted = redis.call('DEL', KEYS[1]) end
redis.call('PUBLISH', ARGV[#ARGV - 1], ARGV[#ARGV])
return deleted

-- reset(key): forgets a key and its block, whatever its algorithm; tells every instance.
-- Source: src/stores/redis/scripts/reset.ts (npm run lua:snapshots).
--
-- KEYS[1]  the key; its block is KEYS[1]..':block'
-- ARGV[1]  the invalidation channel, ARGV[2] its message
-- Reply    the number of keys deleted, 0 to 2
local deleted = redis.call('DEL', KEYS[1], KEYS[1] .. ':block')
redis.call('PUBLISH', ARGV[1], ARGV[2])
return deleted

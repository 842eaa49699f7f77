import { BLOCK_SUFFIX } from './block-key.js';
import { shippedScript } from './compose.js';

const CLOCK = `local now_ms = tonumber(ARGV[1])
if not now_ms then
  local t = redis.call('TIME')
  now_ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
`;

const PUBLISH = `redis.call('PUBLISH', ARGV[#ARGV - 1], ARGV[#ARGV])
`;

/** `block(key, durationMs)` on a Redis limiter, whatever its algorithm. */
export const blockScript = shippedScript(
  'block',
  `-- block(key, ms): denies every decision of a key until now + ms, whatever its algorithm,
-- keeping a block that runs longer; tells every instance.
-- Source: src/stores/redis/scripts/block.ts (npm run lua:snapshots).
--
-- KEYS[1]  the key's state; its block is KEYS[1]..'${BLOCK_SUFFIX}': the block's end, ms on the
--          decisions' clock, with a TTL of the block
-- ARGV[1]  now, ms; '' for the server's TIME
-- ARGV[2]  the block, ms (an integer >= 1)
-- ARGV[3]  the invalidation channel, ARGV[4] its message
-- Reply    1
${CLOCK}local block = KEYS[1] .. '${BLOCK_SUFFIX}'
local ms = tonumber(ARGV[2])
local block_end = tonumber(redis.call('GET', block))
if not block_end or block_end < now_ms + ms then
  redis.call('SET', block, now_ms + ms, 'PX', ms)
end
${PUBLISH}return 1
`,
);

/** `unblock(key)`, and `invalidate(key)` when told no key to delete. */
export const unblockScript = shippedScript(
  'unblock',
  `-- unblock(key): ends a key's block; tells every instance. With no key, only tells (invalidate).
-- Source: src/stores/redis/scripts/block.ts (npm run lua:snapshots).
--
-- KEYS[1]  the key's block, or none
-- ARGV[1]  the invalidation channel, ARGV[2] its message
-- Reply    the number of keys deleted
local deleted = 0
if #KEYS > 0 then deleted = redis.call('DEL', KEYS[1]) end
${PUBLISH}return deleted
`,
);

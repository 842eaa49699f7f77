import { BLOCK_SUFFIX } from './block-key.js';
import { shippedScript } from './compose.js';

/** Deletes a key and its block: `reset(key)` on a Redis limiter, whatever its algorithm; tells every instance. */
export const resetScript = shippedScript(
  'reset',
  `-- reset(key): forgets a key and its block, whatever its algorithm; tells every instance.
-- Source: src/stores/redis/scripts/reset.ts (npm run lua:snapshots).
--
-- KEYS[1]  the key; its block is KEYS[1]..'${BLOCK_SUFFIX}'
-- ARGV[1]  the invalidation channel, ARGV[2] its message
-- Reply    the number of keys deleted, 0 to 2
local deleted = redis.call('DEL', KEYS[1], KEYS[1] .. '${BLOCK_SUFFIX}')
redis.call('PUBLISH', ARGV[1], ARGV[2])
return deleted
`,
);

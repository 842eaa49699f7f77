import { shippedScript } from './compose.js';

/** Deletes a key: `reset(key)` on a Redis limiter, whatever its algorithm. */
export const resetScript = shippedScript(
  'reset',
  `-- reset(key): forgets a key, whatever its algorithm.
-- Source: src/stores/redis/scripts/reset.ts (npm run lua:snapshots).
--
-- KEYS[1]  the key
-- Reply    the number of keys deleted, 0 or 1
return redis.call('DEL', KEYS[1])
`,
);

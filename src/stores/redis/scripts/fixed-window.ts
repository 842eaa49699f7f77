import { algorithmScript, hashDecisions, type LuaAlgorithm } from './compose.js';

/*
 * The rule on `state` (the key's HMGET of n and e) for `cost`, shared by `decide` and the one-key
 * path: runs `admit` when admitted, and leaves `allowed` (0|1), `used` (the window's units after
 * the decision), `retry` (ms; -1: never), and `window_end` and `now`, which the reply counts from.
 */
const rule = (admit: string) => `  local count = tonumber(state[1]) or 0
  local window_end = tonumber(state[2]) or 0
  -- The end goes back as read: Redis before 7.2 writes a number argument with %.17g.
  local stored_end = state[2]
  local now = now_ms
  if now >= window_end then
    count = 0
    window_end = now + window -- the key's next window opens with this request
    stored_end = window_end
  else
    now = max(now, window_end - window) -- a clock behind the window's start counts in it
  end
  local allowed, used, retry = 0, count, -1 -- denied for good: cost > limit
  if cost <= limit then
    if count + cost > limit then
      retry = window_end - now
    else
      allowed, used, retry = 1, count + cost, 0
      ${admit}
    end
  end`;

/** A decision's four reply values, from the rule's; a window with nothing in it resets now. */
const REPLY = 'allowed, limit - used, retry, used > 0 and window_end - now or 0';

/** Writes the window's count and end to `key`, with the TTL rule's TTL. */
const STORE = `redis.call('HSET', key, 'n', used, 'e', stored_end)
redis.call('PEXPIRE', key, ttl_ms(window_end - now))`;

/** Fixed window, the twin of `src/algorithms/fixed-window.ts`; composed into src/stores/redis/lua/. */
export const fixedWindowLua = {
  name: 'fixed-window',
  title: 'Fixed window, the twin of src/algorithms/fixed-window.ts.',
  key: "a hash {n = units admitted in the window, e = the window's end, ms};\nTTL = the time until the window ends",
  params: [
    ['limit', 'units per window'],
    ['window', 'ms'],
  ],
  ...hashDecisions(['n', 'e'], rule, STORE, REPLY),
} as const satisfies LuaAlgorithm;

export const fixedWindowScript = algorithmScript(fixedWindowLua);

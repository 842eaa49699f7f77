import { algorithmScript, type LuaAlgorithm } from './compose.js';

/** Fixed window, the twin of `src/algorithms/fixed-window.ts`; composed into src/stores/redis/lua/. */
export const fixedWindowLua = {
  name: 'fixed-window',
  title: 'Fixed window, the twin of src/algorithms/fixed-window.ts.',
  key: "a hash {n = units admitted in the window, e = the window's end, ms};\nTTL = the time until the window ends",
  params: [
    ['limit', 'units per window'],
    ['window', 'ms'],
  ],
  decide: `
  fresh_if_unowned(key)
  local state = redis.call('HMGET', key, 'n', 'e')
  local count = tonumber(state[1]) or 0
  local window_end = tonumber(state[2]) or 0
  local now = now_ms
  if now >= window_end then
    count = 0
    window_end = now + window -- the key's next window opens with this request
  else
    now = max(now, window_end - window) -- a clock behind the window's start counts in it
  end
  local function reply(allowed, used, retry)
    local reset = 0
    if used > 0 then reset = window_end - now end
    return allowed, limit - used, retry, reset
  end
  if cost > limit then return reply(0, count, -1) end
  if count + cost > limit then return reply(0, count, window_end - now) end
  if commit and cost > 0 then
    redis.call('HSET', key, 'n', count + cost, 'e', window_end)
    redis.call('PEXPIRE', key, ttl_ms(window_end - now))
  end
  return reply(1, count + cost, 0)`,
} as const satisfies LuaAlgorithm;

export const fixedWindowScript = algorithmScript(fixedWindowLua);

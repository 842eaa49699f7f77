import { algorithmScript } from './compose.js';

/**
 * Fixed window, the twin of `src/algorithms/fixed-window.ts`.
 * KEY      hash {n = units admitted in the window, e = the window's end, ms};
 *          TTL = the time until the window ends
 * ARGV[2]  limit, units per window
 * ARGV[3]  window, ms
 */
export const fixedWindowScript = algorithmScript(
  2,
  `
local limit = tonumber(ARGV[2])
local window = tonumber(ARGV[3])
local function decide(key, cost, commit)
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
    redis.call('PEXPIRE', key, window_end - now)
  end
  return reply(1, count + cost, 0)
end
`,
);

import { algorithmScript, type LuaAlgorithm } from './compose.js';

/**
 * Sliding window counter, the twin of `src/algorithms/sliding-window-counter.ts`; composed into
 * src/stores/redis/lua/.
 */
export const slidingWindowCounterLua = {
  name: 'sliding-window-counter',
  title: 'Sliding window counter, the twin of src/algorithms/sliding-window-counter.ts.',
  key: "a hash {c = units in the current window, p = units in the previous window,\ns = the current window's start, ms}; TTL = the time until both windows are past",
  params: [
    ['limit', 'units per window'],
    ['window', 'ms'],
  ],
  state: `
-- the previous window's count weighted by the part of it still inside the sliding window
local function weighted(prev, elapsed) return floor_div(prev * (window - elapsed), window) end
-- ms into a window after which count units of the previous window weigh at most most
local function weighs_at_most_from(count, most) return window - floor_div((most + 1) * window - 1, count) end`,
  decide: `
  fresh_if_unowned(key)
  local state = redis.call('HMGET', key, 'c', 'p', 's')
  local curr = tonumber(state[1]) or 0
  local prev = tonumber(state[2]) or 0
  local start = tonumber(state[3]) or 0
  local now = now_ms
  if curr == 0 and prev == 0 then
    start = now
  else
    now = max(now, start) -- a clock behind the window's start counts in this window
    local windows = floor_div(now - start, window)
    if windows >= 2 then
      curr, prev, start = 0, 0, now
    elseif windows == 1 then
      curr, prev, start = 0, curr, start + window
    end
  end
  local elapsed = now - start
  local old = weighted(prev, elapsed)
  local function reply(allowed, current, retry)
    local reset_at = start
    if current > 0 then
      reset_at = start + window + weighs_at_most_from(current, 0)
    elseif old > 0 then
      reset_at = start + weighs_at_most_from(prev, 0)
    end
    return allowed, limit - old - current, retry, max(0, reset_at - now)
  end
  if cost > limit then return reply(0, curr, -1) end
  if old + curr + cost > limit then
    local room = limit - cost - curr
    if room >= 0 and prev > 0 then
      local from = weighs_at_most_from(prev, room)
      if from < window then return reply(0, curr, from - elapsed) end
    end
    local next_from = 0
    if curr > 0 then next_from = max(0, weighs_at_most_from(curr, limit - cost)) end
    return reply(0, curr, window - elapsed + next_from)
  end
  if commit and cost > 0 then
    redis.call('HSET', key, 'c', curr + cost, 'p', prev, 's', start)
    redis.call('PEXPIRE', key, ttl_ms(start + 2 * window - now))
  end
  return reply(1, curr + cost, 0)`,
} as const satisfies LuaAlgorithm;

export const slidingWindowCounterScript = algorithmScript(slidingWindowCounterLua);

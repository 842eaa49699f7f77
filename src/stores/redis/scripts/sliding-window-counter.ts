import { algorithmScript, hashDecisions, type LuaAlgorithm } from './compose.js';

/*
 * The rule on `state` (the key's HMGET of c, p and s) for `cost`, shared by `decide` and the
 * one-key path: runs `admit` when admitted, and leaves `allowed` (0|1), `current` (the current
 * window's units after the decision), `retry` (ms; -1: never), `old` (the previous window's
 * weighted units), `reset_at` (ms) and `now`.
 */
const rule = (admit: string) => `  local curr = tonumber(state[1]) or 0
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
  local allowed, current, retry = 0, curr, -1 -- denied for good: cost > limit
  if cost <= limit then
    if old + curr + cost > limit then
      -- admitted once enough of the previous window has left, or else in the next window
      local room, from = limit - cost - curr, window
      if room >= 0 and prev > 0 then from = weighs_at_most_from(prev, room) end
      if from < window then
        retry = from - elapsed
      else
        local next_from = 0
        if curr > 0 then next_from = max(0, weighs_at_most_from(curr, limit - cost)) end
        retry = window - elapsed + next_from
      end
    else
      allowed, current, retry = 1, curr + cost, 0
      ${admit}
    end
  end
  local reset_at = start
  if current > 0 then
    reset_at = start + window + weighs_at_most_from(current, 0)
  elseif old > 0 then
    reset_at = start + weighs_at_most_from(prev, 0)
  end`;

/** A decision's four reply values, from the rule's. */
const REPLY = 'allowed, limit - old - current, retry, max(0, reset_at - now)';

/** Writes both windows' counts and the current one's start to `key`, with the TTL rule's TTL. */
const STORE = `redis.call('HSET', key, 'c', current, 'p', prev, 's', start)
redis.call('PEXPIRE', key, ttl_ms(start + 2 * window - now))`;

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
  // The rule's two helpers, before the one-key path, which reads them as the general path does.
  derived: `
-- the previous window's count weighted by the part of it still inside the sliding window
local function weighted(prev, elapsed) return floor_div(prev * (window - elapsed), window) end
-- ms into a window after which count units of the previous window weigh at most most
local function weighs_at_most_from(count, most) return window - floor_div((most + 1) * window - 1, count) end`,
  ...hashDecisions(['c', 'p', 's'], rule, STORE, REPLY),
} as const satisfies LuaAlgorithm;

export const slidingWindowCounterScript = algorithmScript(slidingWindowCounterLua);

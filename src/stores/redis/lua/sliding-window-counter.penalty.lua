-- Sliding window counter, the twin of src/algorithms/sliding-window-counter.ts.
-- Penalty: spends units of one key without an admission.
-- Composed from src/stores/redis/scripts/sliding-window-counter.ts by compose.ts (npm run lua:snapshots).
--
-- KEYS[1]     a hash {c = units in the current window, p = units in the previous window,
--             s = the current window's start, ms}; TTL = the time until both windows are past
-- ARGV[1]     now, ms; '' for the server's TIME
-- ARGV[2]     limit: units per window
-- ARGV[3]     window: ms
-- ARGV[4]     units
-- ARGV[5..6]  the invalidation channel and message ('' '': none)
-- Reply       1

-- Prelude: integer division as in src/algorithms/integer.ts, the call's clock, key ownership, TTLs.
local floor, max = math.floor, math.max -- locals: a global's field costs two lookups a call
local function floor_div(a, b)
  local q = floor(a / b)
  if q * b > a then return q - 1 end
  return q
end
local function ceil_div(a, b) return -floor_div(-a, b) end
local now_ms = tonumber(ARGV[1])
if not now_ms then
  local t = redis.call('TIME')
  now_ms = tonumber(t[1]) * 1000 + floor(tonumber(t[2]) / 1000)
end
-- A key without a TTL was not written by Sluice: drop it, so it is decided as new state.
-- Returns whether it was dropped.
local function fresh_if_unowned(key)
  if redis.call('PTTL', key) ~= -1 then return false end
  redis.call('DEL', key)
  return true
end
-- Every TTL a script sets: the time until the key is fresh again, but at least a second. Redis
-- 7.0 deletes a key at once when PEXPIRE's expiry is past by its clock read again inside the
-- command, as a 1 or 2 ms TTL is whenever the millisecond ticks: the next decision on that key,
-- in this call or another in that ms, would find it fresh and admit again. Any state read after
-- its time until fresh decodes as fresh, so a longer TTL costs memory only. (TTLs set once after
-- the last decision would not do: a key without one reads as unowned to the decisions between.)
-- The floor goes as a string: Redis 7.0 writes a number argument with %.17g, ~3k instructions.
local function ttl_ms(until_fresh_ms)
  if until_fresh_ms > 1000 then return until_fresh_ms end
  return '1000'
end

-- The rule: its parameters, the operation.
local limit = tonumber(ARGV[2])
local window = tonumber(ARGV[3])
-- the previous window's count weighted by the part of it still inside the sliding window
local function weighted(prev, elapsed) return floor_div(prev * (window - elapsed), window) end
-- ms into a window after which count units of the previous window weigh at most most
local function weighs_at_most_from(count, most) return window - floor_div((most + 1) * window - 1, count) end
local function decide(key, cost, commit, i)
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
      if commit and cost > 0 then
        redis.call('HSET', key, 'c', current, 'p', prev, 's', start)
        redis.call('PEXPIRE', key, ttl_ms(start + 2 * window - now))
      end
    end
  end
  local reset_at = start
  if current > 0 then
    reset_at = start + window + weighs_at_most_from(current, 0)
  elseif old > 0 then
    reset_at = start + weighs_at_most_from(prev, 0)
  end
  return allowed, limit - old - current, retry, max(0, reset_at - now)
end
local function operate(key, units)
  -- Spends as many of units as the key holds now (a cost-0 decision's remaining), as far as the limit.
  local _, held = decide(key, 0, false)
  if held > units then held = units end
  if held > 0 then decide(key, held, true) end
end
operate(KEYS[1], tonumber(ARGV[4]))
if ARGV[5] ~= '' then redis.call('PUBLISH', ARGV[5], ARGV[6]) end
return 1

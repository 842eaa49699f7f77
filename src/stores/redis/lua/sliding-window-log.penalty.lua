-- Sliding window log, the twin of src/algorithms/sliding-window-log.ts.
-- Penalty: spends units of one key without an admission.
-- Composed from src/stores/redis/scripts/sliding-window-log.ts by compose.ts (npm run lua:snapshots).
--
-- KEYS[1]     a sorted set, one member per ms in which units were admitted: score = that ms,
--             member = '<first>:<last>', the numbers of its units when the key's units are numbered
--             1, 2, 3, ... So members are unique without randomness, and the units in the window are
--             last(newest) - first(oldest) + 1, found in O(log n). Requests within one ms share a member
--             (the same score would otherwise order members by their text).
--             TTL = the window (the newest entry leaves it then)
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
-- An integer as text in full: Lua's own number-to-string conversion rounds to 14 digits.
local function int(n) return string.format('%.0f', n) end
-- the numbers of a member's first and last units
local function range_of(member)
  local first, last = string.match(member, '^(%d+):(%d+)$')
  return tonumber(first), tonumber(last)
end
local function decide(key, cost, commit, i)
  fresh_if_unowned(key)
  local now = now_ms
  local newest, first_unit, last_unit = now, 1, 0
  local top = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
  if top[1] then
    newest = tonumber(top[2])
    first_unit, last_unit = range_of(top[1])
    now = max(now, newest) -- a clock behind the newest entry counts from that entry
  end
  local live = '(' .. int(now - window) -- entries at or before now - window have left the window
  local used = 0
  local oldest = redis.call('ZRANGE', key, live, '+inf', 'BYSCORE', 'LIMIT', 0, 1)
  if oldest[1] then used = last_unit - range_of(oldest[1]) + 1 end
  local function reply(allowed, in_window, last_ms, retry)
    local reset = 0
    if in_window > 0 then reset = last_ms + window - now end
    return allowed, limit - in_window, retry, reset
  end
  if cost > limit then return reply(0, used, newest, -1) end
  local excess = used + cost - limit
  if excess > 0 then
    -- admitted once the oldest excess units have left: at most excess entries hold them
    local entries = redis.call('ZRANGE', key, live, '+inf', 'BYSCORE', 'LIMIT', 0, excess, 'WITHSCORES')
    local first = range_of(entries[1])
    for i = 1, #entries, 2 do
      local _, last = range_of(entries[i])
      if last - first + 1 >= excess then return reply(0, used, newest, tonumber(entries[i + 1]) + window - now) end
    end
  end
  if commit and cost > 0 then
    redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
    if top[1] and newest == now then
      redis.call('ZREM', key, top[1]) -- this ms already has a member: extend it
    else
      first_unit = last_unit + 1
    end
    redis.call('ZADD', key, now, int(first_unit) .. ':' .. int(last_unit + cost))
    redis.call('PEXPIRE', key, ttl_ms(window))
  end
  if cost > 0 then newest = now end
  return reply(1, used + cost, newest, 0)
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

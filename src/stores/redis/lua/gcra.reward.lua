-- GCRA, the twin of src/algorithms/gcra.ts.
-- Reward: gives units back to one key, never past fresh; tells every instance.
-- Composed from src/stores/redis/scripts/gcra.ts by compose.ts (npm run lua:snapshots).
--
-- KEYS[1]     the key's TAT: integer us, in a string with a TTL of the time until it is fresh again
-- ARGV[1]     now, ms; '' for the server's TIME
-- ARGV[2]     interval: emission interval T, us
-- ARGV[3]     burst: units
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
local interval = tonumber(ARGV[2])
local burst = tonumber(ARGV[3])
local function operate(key, units)
  -- The twin of gcra().refund: TAT moves back by units x T, never before now.
  local now = now_ms * 1000
  fresh_if_unowned(key)
  local tat = tonumber(redis.call('GET', key))
  if not tat then return end -- a key Redis does not hold is already fresh
  local next_tat = max(tat - units * interval, now)
  -- A TAT at or before now is a fresh key: delete rather than keep a key with nothing in it.
  if next_tat <= now then
    redis.call('DEL', key)
  else
    redis.call('SET', key, (redis.REDIS_VERSION_NUM or 0) < 0x070200 and string.format('%d', next_tat) or next_tat, 'PX', ttl_ms(ceil_div(next_tat - now, 1000)))
  end
end
operate(KEYS[1], tonumber(ARGV[4]))
if ARGV[5] ~= '' then redis.call('PUBLISH', ARGV[5], ARGV[6]) end
return 1

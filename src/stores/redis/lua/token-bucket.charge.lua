-- Token bucket, the twin of src/algorithms/token-bucket.ts.
-- Charge: spends units of one key as debt, without the admission check.
-- Composed from src/stores/redis/scripts/token-bucket.ts by compose.ts (npm run lua:snapshots).
--
-- KEYS[1]  a hash {d = deficit: units missing from a full bucket, t = ms of the last write};
--          TTL = the time until the bucket is full again
-- ARGV[1]  now, ms; '' for the server's TIME
-- ARGV[2]  capacity: tokens
-- ARGV[3]  unit: units per token
-- ARGV[4]  refill: units per ms
-- ARGV[5]  units to charge
-- Reply    1

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

-- The rule: its parameters, one charge.
local capacity = tonumber(ARGV[2])
local unit = tonumber(ARGV[3])
local refill = tonumber(ARGV[4])
local function charge(key, units)
  -- The twin of tokenBucket().charge: refill up to now, then the deficit grows by units x unit,
  -- past a full bucket's if need be, capped at 2^53 - 1 so it stays an exact integer.
  fresh_if_unowned(key)
  local state = redis.call('HMGET', key, 'd', 't')
  local deficit = tonumber(state[1]) or 0
  local last = tonumber(state[2]) or 0
  local now = max(now_ms, last) -- a clock behind the last write does not refill backwards
  if now - last >= ceil_div(deficit, refill) then deficit = 0 else deficit = deficit - (now - last) * refill end
  deficit = math.min(deficit + units * unit, 9007199254740991)
  redis.call('HSET', key, 'd', deficit, 't', now)
  redis.call('PEXPIRE', key, ttl_ms(ceil_div(deficit, refill)))
end
charge(KEYS[1], tonumber(ARGV[#ARGV]))
return 1

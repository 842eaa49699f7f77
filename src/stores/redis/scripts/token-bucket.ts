import { algorithmScript, type LuaAlgorithm } from './compose.js';

/**
 * Token bucket, the twin of `src/algorithms/token-bucket.ts`; composed into
 * src/stores/redis/lua/token-bucket*.lua. Integer units: a token is `unit` units, and the bucket
 * gains `refill` units per ms.
 */
export const tokenBucketLua = {
  name: 'token-bucket',
  title: 'Token bucket, the twin of src/algorithms/token-bucket.ts.',
  key: 'a hash {d = deficit: units missing from a full bucket, t = ms of the last write};\nTTL = the time until the bucket is full again',
  params: [
    ['capacity', 'tokens'],
    ['unit', 'units per token'],
    ['refill', 'units per ms'],
  ],
  state: `
local full = capacity * unit`,
  decide: `
  fresh_if_unowned(key)
  local state = redis.call('HMGET', key, 'd', 't')
  local deficit = tonumber(state[1]) or 0
  local last = tonumber(state[2]) or 0
  local now = max(now_ms, last) -- a clock behind the last write does not refill backwards
  if now - last >= ceil_div(deficit, refill) then deficit = 0 else deficit = deficit - (now - last) * refill end
  local function reply(allowed, d, retry)
    -- A charged debt can take the deficit past a full bucket's: remaining stops at 0.
    return allowed, max(0, capacity - ceil_div(d, unit)), retry, ceil_div(d, refill)
  end
  if cost > capacity then return reply(0, deficit, -1) end
  local next = deficit + cost * unit
  if next > full then return reply(0, deficit, ceil_div(next - full, refill)) end
  if commit and cost > 0 then
    redis.call('HSET', key, 'd', next, 't', now)
    redis.call('PEXPIRE', key, ttl_ms(ceil_div(next, refill)))
  end
  return reply(1, next, 0)`,
  refund: `
  -- The twin of tokenBucket().refund: refill up to now, then the deficit falls by units x unit,
  -- never below 0 (a full bucket, deleted rather than stored).
  fresh_if_unowned(key)
  local state = redis.call('HMGET', key, 'd', 't')
  local deficit = tonumber(state[1])
  if not deficit then return end -- a key Redis does not hold is already full
  local last = tonumber(state[2]) or 0
  local now = max(now_ms, last) -- a clock behind the last write does not refill backwards
  if now - last >= ceil_div(deficit, refill) then deficit = 0 else deficit = deficit - (now - last) * refill end
  deficit = max(0, deficit - units * unit)
  if deficit == 0 then
    redis.call('DEL', key)
  else
    redis.call('HSET', key, 'd', deficit, 't', now)
    redis.call('PEXPIRE', key, ttl_ms(ceil_div(deficit, refill)))
  end`,
  charge: `
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
  redis.call('PEXPIRE', key, ttl_ms(ceil_div(deficit, refill)))`,
} as const satisfies LuaAlgorithm;

export const tokenBucketScript = algorithmScript(tokenBucketLua);

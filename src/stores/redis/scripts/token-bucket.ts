import { algorithmScript, hashDecisions, type LuaAlgorithm } from './compose.js';

/*
 * The rule on `state` (the key's HMGET of d and t) for `cost`, shared by `decide` and the one-key
 * path: runs `admit` when admitted, with `next` the deficit to store, and leaves `allowed` (0|1),
 * `after` (the deficit after the decision), `retry` (ms; -1: never) and `now`.
 */
const rule = (admit: string) => `  local deficit = tonumber(state[1]) or 0
  local last = tonumber(state[2]) or 0
  local now = max(now_ms, last) -- a clock behind the last write does not refill backwards
  if now - last >= ceil_div(deficit, refill) then deficit = 0 else deficit = deficit - (now - last) * refill end
  local allowed, after, retry = 0, deficit, -1 -- denied for good: cost > capacity
  if cost <= capacity then
    local next = deficit + cost * unit
    if next > full then
      retry = ceil_div(next - full, refill)
    else
      allowed, after, retry = 1, next, 0
      ${admit}
    end
  end`;

/**
 * A decision's four reply values, from the rule's. A charged debt can take the deficit past a
 * full bucket's: remaining stops at 0.
 */
const REPLY = 'allowed, max(0, capacity - ceil_div(after, unit)), retry, ceil_div(after, refill)';

/** Writes the deficit and the time of this write to `key`, with the TTL rule's TTL. */
const STORE = `redis.call('HSET', key, 'd', next, 't', now)
redis.call('PEXPIRE', key, ttl_ms(ceil_div(next, refill)))`;

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
  derived: `
local full = capacity * unit`,
  ...hashDecisions(['d', 't'], rule, STORE, REPLY),
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

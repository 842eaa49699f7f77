import type { AlgorithmName } from '../../../algorithms/types.js';
import type { LuaScript } from '../script.js';
import { refundScript } from './compose.js';

/**
 * GCRA refund, the twin of `gcra().refund`: TAT moves back by units × T, never before now.
 * KEY      the key's TAT (integer µs) with a TTL of the time until it is fresh again
 * ARGV[2]  emission interval T, µs
 * ARGV[3]  burst (unused here; kept so ARGV matches the decision script's parameters)
 * ARGV[4]  units to give back
 */
const gcraRefund = refundScript(`
local interval = tonumber(ARGV[2])
local now = now_ms * 1000
local function refund(key, units)
  fresh_if_unowned(key)
  local tat = tonumber(redis.call('GET', key))
  if not tat then return end -- a key Redis does not hold is already fresh
  local next_tat = max(tat - units * interval, now)
  -- A TAT at or before now is a fresh key: delete rather than keep a key with nothing in it.
  if next_tat <= now then
    redis.call('DEL', key)
  else
    redis.call('SET', key, next_tat, 'PX', ceil_div(next_tat - now, 1000))
  end
end
`);

/**
 * Token bucket refund, the twin of `tokenBucket().refund`: refill up to now, then the deficit
 * falls by units × unit, never below 0 (a full bucket, deleted rather than stored).
 * KEY      hash {d = deficit in units, t = ms of the last write}; TTL = time until full again
 * ARGV[2]  capacity (unused here), ARGV[3] unit (units per token), ARGV[4] refill (units per ms)
 * ARGV[5]  tokens to give back
 */
const tokenBucketRefund = refundScript(`
local unit = tonumber(ARGV[3])
local refill = tonumber(ARGV[4])
local function refund(key, units)
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
    redis.call('PEXPIRE', key, ceil_div(deficit, refill))
  end
end
`);

/** Refund scripts by algorithm; an algorithm without one has no `refund` on its Redis limiter. */
export const refundScripts: Partial<Record<AlgorithmName, LuaScript>> = {
  gcra: gcraRefund,
  'token-bucket': tokenBucketRefund,
};

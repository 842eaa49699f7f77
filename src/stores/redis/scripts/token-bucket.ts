import { algorithmScript } from './compose.js';

/**
 * Token bucket, the twin of `src/algorithms/token-bucket.ts`. Integer units: a token is `unit`
 * units, and the bucket gains `refill` units per ms.
 * KEY      hash {d = deficit: units missing from a full bucket, t = ms of the last write};
 *          TTL = the time until the bucket is full again
 * ARGV[2]  capacity, tokens
 * ARGV[3]  unit, units per token
 * ARGV[4]  refill, units per ms
 */
export const tokenBucketScript = algorithmScript(
  3,
  `
local capacity = tonumber(ARGV[2])
local unit = tonumber(ARGV[3])
local refill = tonumber(ARGV[4])
local full = capacity * unit
local function decide(key, cost, commit)
  fresh_if_unowned(key)
  local state = redis.call('HMGET', key, 'd', 't')
  local deficit = tonumber(state[1]) or 0
  local last = tonumber(state[2]) or 0
  local now = max(now_ms, last) -- a clock behind the last write does not refill backwards
  if now - last >= ceil_div(deficit, refill) then deficit = 0 else deficit = deficit - (now - last) * refill end
  local function reply(allowed, d, retry)
    return allowed, capacity - ceil_div(d, unit), retry, ceil_div(d, refill)
  end
  if cost > capacity then return reply(0, deficit, -1) end
  local next = deficit + cost * unit
  if next > full then return reply(0, deficit, ceil_div(next - full, refill)) end
  if commit and cost > 0 then
    redis.call('HSET', key, 'd', next, 't', now)
    redis.call('PEXPIRE', key, ceil_div(next, refill))
  end
  return reply(1, next, 0)
end
`,
);

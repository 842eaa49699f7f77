import { defineScript } from '../script.js';
import { PRELUDE } from './prelude.js';

/**
 * GCRA, the twin of `src/algorithms/gcra.ts`.
 * KEYS[1]  the key's TAT: integer µs, in a string with a TTL
 * ARGV[4]  emission interval T, µs
 * ARGV[5]  burst, units
 * Returns {allowed 0|1, remaining, retryAfterMs (−1: never), resetAfterMs}.
 */
export const gcraScript = defineScript(`${PRELUDE}
local interval = tonumber(ARGV[4])
local burst = tonumber(ARGV[5])
local horizon = burst * interval -- how far TAT may run ahead of now
local now = now_ms * 1000
fresh_if_unowned(KEYS[1])
local tat = math.max(tonumber(redis.call('GET', KEYS[1])) or 0, now)
local function reply(allowed, at, retry)
  return {allowed, math.max(0, floor_div(horizon - (at - now), interval)), retry, ceil_div(at - now, 1000)}
end
if cost > burst then return reply(0, tat, -1) end
local next_tat = tat + cost * interval
local allow_at = next_tat - horizon
if allow_at > now then return reply(0, tat, ceil_div(allow_at - now, 1000)) end
if commit and cost > 0 then
  redis.call('SET', KEYS[1], string.format('%.0f', next_tat), 'PX', math.max(1, ceil_div(next_tat - now, 1000)))
end
return reply(1, next_tat, 0)
`);

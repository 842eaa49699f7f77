import { algorithmScript } from './compose.js';

/**
 * GCRA, the twin of `src/algorithms/gcra.ts`.
 * KEY      the key's TAT: integer µs, in a string with a TTL of the time until it is fresh again
 * ARGV[2]  emission interval T, µs
 * ARGV[3]  burst, units
 */
export const gcraScript = algorithmScript(`
local interval = tonumber(ARGV[2])
local burst = tonumber(ARGV[3])
local horizon = burst * interval -- how far TAT may run ahead of now
local now = now_ms * 1000
local function reply(allowed, at, retry)
  return allowed, math.max(0, floor_div(horizon - (at - now), interval)), retry, ceil_div(at - now, 1000)
end
-- TATs this call admitted, each SET once at its end: a key decided k times in one batch costs
-- one GET and one SET, not k of each. Nobody sees between a script's decisions, so the state
-- Redis ends with is the one k separate calls would leave.
local admitted = {}
write_back = function()
  for key, tat in pairs(admitted) do
    redis.call('SET', key, tat, 'PX', math.max(1, ceil_div(tat - now, 1000)))
  end
end
local function decide(key, cost, commit)
  local tat = admitted[key]
  if not tat then
    tat = tonumber(redis.call('GET', key))
    -- Only a TAT ahead of now sways a decision (one at or before now is a fresh key), so only
    -- then is it worth a PTTL to learn whether Sluice wrote it.
    if tat and tat > now and fresh_if_unowned(key) then tat = nil end
  end
  tat = math.max(tat or 0, now)
  if cost > burst then return reply(0, tat, -1) end
  local next_tat = tat + cost * interval
  local allow_at = next_tat - horizon
  if allow_at > now then return reply(0, tat, ceil_div(allow_at - now, 1000)) end
  if commit and cost > 0 then admitted[key] = next_tat end
  return reply(1, next_tat, 0)
end
`);

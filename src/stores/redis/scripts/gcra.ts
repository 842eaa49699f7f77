import { algorithmScript } from './compose.js';

/**
 * GCRA, the twin of `src/algorithms/gcra.ts`.
 * KEY      the key's TAT: integer µs, in a string with a TTL of the time until it is fresh again
 * ARGV[2]  emission interval T, µs
 * ARGV[3]  burst, units
 */
export const gcraScript = algorithmScript(
  2,
  `
local interval = tonumber(ARGV[2])
local burst = tonumber(ARGV[3])
local horizon = burst * interval -- how far TAT may run ahead of now
local now = now_ms * 1000
-- TATs this call admitted, each SET once at its end: a key decided k times in one batch costs
-- one read and one SET, not k of each. Nobody sees between a script's decisions, so the state
-- Redis ends with is the one k separate calls would leave.
local admitted = {}
write_back = function()
  for key, tat in pairs(admitted) do
    redis.call('SET', key, tat, 'PX', max(1, ceil_div(tat - now, 1000)))
  end
end
-- The stored values of a same-slot call, by decision, from one MGET; the per-node loop reads
-- key by key. MGET reads a key holding no string as nil, so a key of another type under the
-- prefix, like one holding no number, is decided as fresh and replaced on every path.
local stored = {}
read_ahead = function(keys) stored = redis.call('MGET', unpack(keys)) end
-- Stored TATs ahead of now that this call has asked PTTL about (false: the key was unowned and
-- dropped): a key decided k times in one call without an admission costs one PTTL, not k.
local verified = {}
local function decide(key, cost, commit, i)
  local tat = admitted[key]
  if not tat then
    tat = verified[key]
    if tat == nil then
      local value = stored[i]
      if value == nil then value = redis.call('MGET', key)[1] end
      tat = tonumber(value)
      -- Only a TAT ahead of now sways a decision (one at or before now is a fresh key), so only
      -- then is it worth a PTTL to learn whether Sluice wrote it.
      if tat and tat > now then
        if fresh_if_unowned(key) then tat = false end
        verified[key] = tat
      end
    end
  end
  if not tat or tat < now then tat = now end
  local allowed, retry, at = 0, -1, tat -- denied for good: cost > burst
  if cost <= burst then
    local next_tat = tat + cost * interval
    local allow_at = next_tat - horizon
    if allow_at > now then
      retry = ceil_div(allow_at - now, 1000)
    else
      allowed, retry, at = 1, 0, next_tat
      if commit and cost > 0 then admitted[key] = next_tat end
    end
  end
  return allowed, max(0, floor_div(horizon - (at - now), interval)), retry, ceil_div(at - now, 1000)
end
`,
);

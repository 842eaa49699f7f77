import { algorithmScript, type LuaAlgorithm } from './compose.js';

/*
 * The rule on `tat` (the stored TAT; false: none) for `cost`, shared by `decide` and the one-key
 * path: runs `admit` when admitted, with `next_tat` the TAT to store, and leaves `allowed`
 * (0|1), `retry` (ms; -1: never) and `at`, the TAT the reply counts from. (`admit` sits in the
 * admitted branch: a test of `allowed` after it costs a batch ~60 instructions per decision.)
 */
const rule = (admit: string) => `  if not tat or tat < now then tat = now end
  local allowed, retry, at = 0, -1, tat -- denied for good: cost > burst
  if cost <= burst then
    local next_tat = tat + cost * interval
    local allow_at = next_tat - horizon
    if allow_at > now then
      retry = ceil_div(allow_at - now, 1000)
    else
      allowed, retry, at = 1, 0, next_tat
      ${admit}
    end
  end`;

/** A decision's four reply values, from the rule's `allowed`, `retry` and `at`. */
const REPLY = 'allowed, max(0, floor_div(horizon - (at - now), interval)), retry, ceil_div(at - now, 1000)';

/**
 * Writes `tat` (a Lua expression) as `key`'s TAT, with the TTL rule's TTL. Redis before 7.2
 * writes a number argument with %.17g: ~3k instructions for a TAT, the integer's own digits a
 * third of that; Valkey 8 (7.2.4 by its REDIS_VERSION_NUM) writes the number for less than the
 * digits. So the TAT goes as its digits before 7.2 only.
 */
const store = (tat: string) =>
  `redis.call('SET', key, (redis.REDIS_VERSION_NUM or 0) < 0x070200 and string.format('%d', ${tat}) or ${tat}, 'PX', ttl_ms(ceil_div(${tat} - now, 1000)))`;

/** GCRA, the twin of `src/algorithms/gcra.ts`; composed into src/stores/redis/lua/gcra*.lua. */
export const gcraLua = {
  name: 'gcra',
  title: 'GCRA, the twin of src/algorithms/gcra.ts.',
  key: "the key's TAT: integer us, in a string with a TTL of the time until it is fresh again",
  params: [
    ['interval', 'emission interval T, us'],
    ['burst', 'units'],
  ],
  stringState: true,
  oneKey: `
local tat = tonumber(value)
-- A TAT beyond the horizon is left to the general path, which asks whether Sluice wrote it.
if not (tat and tat > now + horizon) then
${rule(`if cost > 0 then ${store('next_tat')} end`)}
  return { ${REPLY} }
end`,
  derived: `
local horizon = burst * interval -- how far TAT may run ahead of now
local now = now_ms * 1000`,
  state: `
-- TATs this call admitted, each SET once at its end: a key decided k times in one batch costs
-- one read and one SET, not k of each. Nobody sees between a script's decisions, so the state
-- Redis ends with is the one k separate calls would leave.
local admitted = {}
-- The stored TAT of each key this call has read (false: none, or dropped as unowned): a key
-- decided k times in one call without an admission costs one read and one PTTL at most, not k.
local known = {}`,
  decide: `
  local tat = admitted[key]
  if not tat then
    tat = known[key]
    if tat == nil then
      local value = stored[i]
      if value == nil then value = redis.call('MGET', key)[1] end
      tat = tonumber(value) or false
      -- Only a TAT beyond the horizon is worth a PTTL to learn whether Sluice wrote it: no
      -- admission of this rule leaves one there, so it could deny longer than the rule allows.
      -- A TAT within it is a state this rule could have written: Sluice's or not, it decays
      -- within the horizon, and the next admission SETs it with a TTL. (A charge or penalty may
      -- write beyond it: its key has a TTL, so the PTTL keeps it.)
      if tat and tat > now + horizon and fresh_if_unowned(key) then tat = false end
      known[key] = tat
    end
  end
${rule('if commit and cost > 0 then admitted[key] = next_tat end')}
  return ${REPLY}`,
  writeBack: `
  for key, tat in pairs(admitted) do
    ${store('tat')}
  end`,
  refund: `
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
    ${store('next_tat')}
  end`,
  charge: `
  -- The twin of gcra().charge: TAT moves on by units x T from max(TAT, now), however far ahead,
  -- capped at 2^53 - 1 so it stays an exact integer.
  local now = now_ms * 1000
  fresh_if_unowned(key)
  local tat = max(tonumber(redis.call('GET', key)) or now, now)
  local next_tat = math.min(tat + units * interval, 9007199254740991)
  ${store('next_tat')}`,
} as const satisfies LuaAlgorithm;

export const gcraScript = algorithmScript(gcraLua);

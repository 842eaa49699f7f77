import { algorithmScript, type LuaAlgorithm } from './compose.js';

/**
 * Sliding window log, the twin of `src/algorithms/sliding-window-log.ts`; composed into
 * src/stores/redis/lua/.
 */
export const slidingWindowLogLua = {
  name: 'sliding-window-log',
  title: 'Sliding window log, the twin of src/algorithms/sliding-window-log.ts.',
  key: [
    'a sorted set, one member per ms in which units were admitted: score = that ms,',
    "member = '<first>:<last>', the numbers of its units when the key's units are numbered",
    '1, 2, 3, ... So members are unique without randomness, and the units in the window are',
    'last(newest) - first(oldest) + 1, found in O(log n). Requests within one ms share a member',
    '(the same score would otherwise order members by their text).',
    'TTL = the window (the newest entry leaves it then)',
  ].join('\n'),
  params: [
    ['limit', 'units per window'],
    ['window', 'ms'],
  ],
  state: `
-- An integer as text in full: Lua's own number-to-string conversion rounds to 14 digits.
local function int(n) return string.format('%.0f', n) end
-- the numbers of a member's first and last units
local function range_of(member)
  local first, last = string.match(member, '^(%d+):(%d+)$')
  return tonumber(first), tonumber(last)
end`,
  decide: `
  fresh_if_unowned(key)
  local now = now_ms
  local newest, first_unit, last_unit = now, 1, 0
  local top = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
  if top[1] then
    newest = tonumber(top[2])
    first_unit, last_unit = range_of(top[1])
    now = max(now, newest) -- a clock behind the newest entry counts from that entry
  end
  local live = '(' .. int(now - window) -- entries at or before now - window have left the window
  local used = 0
  local oldest = redis.call('ZRANGE', key, live, '+inf', 'BYSCORE', 'LIMIT', 0, 1)
  if oldest[1] then used = last_unit - range_of(oldest[1]) + 1 end
  local function reply(allowed, in_window, last_ms, retry)
    local reset = 0
    if in_window > 0 then reset = last_ms + window - now end
    return allowed, limit - in_window, retry, reset
  end
  if cost > limit then return reply(0, used, newest, -1) end
  local excess = used + cost - limit
  if excess > 0 then
    -- admitted once the oldest excess units have left: at most excess entries hold them
    local entries = redis.call('ZRANGE', key, live, '+inf', 'BYSCORE', 'LIMIT', 0, excess, 'WITHSCORES')
    local first = range_of(entries[1])
    for i = 1, #entries, 2 do
      local _, last = range_of(entries[i])
      if last - first + 1 >= excess then return reply(0, used, newest, tonumber(entries[i + 1]) + window - now) end
    end
  end
  if commit and cost > 0 then
    redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
    if top[1] and newest == now then
      redis.call('ZREM', key, top[1]) -- this ms already has a member: extend it
    else
      first_unit = last_unit + 1
    end
    redis.call('ZADD', key, now, int(first_unit) .. ':' .. int(last_unit + cost))
    redis.call('PEXPIRE', key, ttl_ms(window))
  end
  if cost > 0 then newest = now end
  return reply(1, used + cost, newest, 0)`,
} as const satisfies LuaAlgorithm;

export const slidingWindowLogScript = algorithmScript(slidingWindowLogLua);

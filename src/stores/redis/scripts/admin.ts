import type { AlgorithmName } from '../../../algorithms/types.js';
import type { LuaScript } from '../script.js';
import { type LuaAlgorithm, operationScript } from './compose.js';
import { fixedWindowLua } from './fixed-window.js';
import { gcraLua } from './gcra.js';
import { slidingWindowCounterLua } from './sliding-window-counter.js';
import { slidingWindowLogLua } from './sliding-window-log.js';
import { tokenBucketLua } from './token-bucket.js';

/** The `reward` and `penalty` scripts of an algorithm that gives them a meaning (docs/admin.md). */
export interface AdminScripts {
  readonly reward: LuaScript;
  readonly penalty: LuaScript;
}

const REWARD = 'Reward: gives units back to one key, never past fresh; tells every instance.';
const PENALTY = 'Penalty: spends units of one key without an admission.';

function adminScripts(lua: LuaAlgorithm, reward: string, penalty: string): AdminScripts {
  return {
    reward: operationScript(lua, 'reward', REWARD, reward),
    penalty: operationScript(lua, 'penalty', PENALTY, penalty),
  };
}

/** The sliding windows' scripts: the reward reads the rule's helpers, the penalty its `decide`. */
function slidingAdminScripts(lua: LuaAlgorithm, reward: string): AdminScripts {
  return {
    reward: operationScript(lua, 'reward', REWARD, reward, 'state'),
    penalty: operationScript(lua, 'penalty', PENALTY, SPEND_HELD, 'decide'),
  };
}

/** The twin of `spendHeld` (src/algorithms/partial.ts), over the algorithm's own `decide`. */
const SPEND_HELD = `
  -- Spends as many of units as the key holds now (a cost-0 decision's remaining), as far as the limit.
  local _, held = decide(key, 0, false)
  if held > units then held = units end
  if held > 0 then decide(key, held, true) end`;

/** By algorithm: every algorithm Sluice ships gives both a meaning (docs/admin.md). */
export const adminScriptsOf: Record<AlgorithmName, AdminScripts> = {
  gcra: adminScripts(
    gcraLua,
    gcraLua.refund,
    `
  -- The twin of gcra().charge: TAT moves on by units x T from max(TAT, now).
  local now = now_ms * 1000
  fresh_if_unowned(key)
  local tat = max(tonumber(redis.call('GET', key)) or now, now)
  local next_tat = tat + units * interval
  redis.call('SET', key, next_tat, 'PX', max(1, ceil_div(next_tat - now, 1000)))`,
  ),
  'token-bucket': adminScripts(
    tokenBucketLua,
    tokenBucketLua.refund,
    `
  -- The twin of tokenBucket().charge: refill up to now, then the deficit grows by units x unit.
  fresh_if_unowned(key)
  local state = redis.call('HMGET', key, 'd', 't')
  local deficit = tonumber(state[1]) or 0
  local last = tonumber(state[2]) or 0
  local now = max(now_ms, last)
  if now - last >= ceil_div(deficit, refill) then deficit = 0 else deficit = deficit - (now - last) * refill end
  deficit = deficit + units * unit
  redis.call('HSET', key, 'd', deficit, 't', now)
  redis.call('PEXPIRE', key, max(1, ceil_div(deficit, refill)))`,
  ),
  'fixed-window': adminScripts(
    fixedWindowLua,
    `
  -- The twin of fixedWindow().reward: counts the open window down; 0 is a fresh key.
  fresh_if_unowned(key)
  local state = redis.call('HMGET', key, 'n', 'e')
  local count = tonumber(state[1])
  if not count or now_ms >= (tonumber(state[2]) or 0) then return end
  count = max(0, count - units)
  if count == 0 then redis.call('DEL', key) else redis.call('HSET', key, 'n', count) end`,
    `
  -- The twin of fixedWindow().penalty: counts the open window up (opening one now if none is),
  -- as far as the limit.
  fresh_if_unowned(key)
  local state = redis.call('HMGET', key, 'n', 'e')
  local count = tonumber(state[1]) or 0
  local window_end = tonumber(state[2]) or 0
  local now = now_ms
  if now >= window_end then
    count = 0
    window_end = now + window
  else
    now = max(now, window_end - window)
  end
  redis.call('HSET', key, 'n', math.min(limit, count + units), 'e', window_end)
  redis.call('PEXPIRE', key, window_end - now)`,
  ),
  'sliding-window-log': slidingAdminScripts(
    slidingWindowLogLua,
    `
  -- The twin of slidingWindowLog().reward: drops the newest units in the window, never past
  -- empty. Members are popped from the top; the last one popped may give back part of its units.
  fresh_if_unowned(key)
  local top = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
  if not top[1] then return end
  local now = max(now_ms, tonumber(top[2]))
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
  while units > 0 do
    local newest = redis.call('ZPOPMAX', key)
    if not newest[1] then return end
    local first, last = range_of(newest[1])
    if last - first + 1 > units then
      -- popping the set's last member deleted the key: its TTL is set again
      redis.call('ZADD', key, newest[2], int(first) .. ':' .. int(last - units))
      redis.call('PEXPIRE', key, ttl_ms(tonumber(newest[2]) + window - now))
      return
    end
    units = units - (last - first + 1)
  end`,
  ),
  'sliding-window-counter': slidingAdminScripts(
    slidingWindowCounterLua,
    `
  -- The twin of slidingWindowCounter().reward: counts the current window down, then the previous
  -- one to the largest count whose weight fell by the rest; both 0 is a fresh key.
  fresh_if_unowned(key)
  local state = redis.call('HMGET', key, 'c', 'p', 's')
  local curr = tonumber(state[1]) or 0
  local prev = tonumber(state[2]) or 0
  local start = tonumber(state[3]) or 0
  if curr == 0 and prev == 0 then return end
  local now = max(now_ms, start)
  local windows = floor_div(now - start, window)
  if windows >= 2 then return end -- nothing weighs any more: already a fresh key
  if windows == 1 then curr, prev, start = 0, curr, start + window end
  local elapsed = now - start
  local from_curr = math.min(units, curr)
  local weighs = max(0, weighted(prev, elapsed) - (units - from_curr))
  curr = curr - from_curr
  prev = math.min(prev, floor_div((weighs + 1) * window - 1, window - elapsed))
  if curr == 0 and prev == 0 then
    redis.call('DEL', key)
  else
    redis.call('HSET', key, 'c', curr, 'p', prev, 's', start)
    redis.call('PEXPIRE', key, ttl_ms(start + 2 * window - now))
  end`,
  ),
};

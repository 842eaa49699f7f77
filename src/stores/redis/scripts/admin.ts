import type { AlgorithmName } from '../../../algorithms/types.js';
import type { LuaScript } from '../script.js';
import { type LuaAlgorithm, operationScript } from './compose.js';
import { fixedWindowLua } from './fixed-window.js';
import { gcraLua } from './gcra.js';
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

/** By algorithm; the sliding windows have none, and their Redis limiters reject both operations. */
export const adminScriptsOf: Partial<Record<AlgorithmName, AdminScripts>> = {
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
};

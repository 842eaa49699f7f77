#!lua flags=allow-cross-slot-keys
-- Fixed window, the twin of src/algorithms/fixed-window.ts.
-- Decides keys of many slots that this Cluster master serves, in one atomic call.
-- Composed from src/stores/redis/scripts/fixed-window.ts by compose.ts (npm run lua:snapshots).
--
-- KEYS[1]      the first decision's key, declared for routing only: every key travels in ARGV
-- each key     a hash {n = units admitted in the window, e = the window's end, ms};
--              TTL = the time until the window ends
-- ARGV[1]      now, ms; '' for the server's TIME
-- ARGV[2]      limit: units per window
-- ARGV[3]      window: ms
-- ARGV[4..]    per decision, a pair: its key, then its cost in units to apply if admitted,
--              or -1 - cost to only report it (a peek),
--              or -0.5 - cost to admit as many of cost as are held (partial)
-- ARGV[#ARGV]  n, the number of decisions
-- Reply        4 integers per decision: allowed 0|1 (-2: denied by a block; partial: -1 denied,
--              else 2 + units admitted),
--              remaining units, retry after ms (-1: never), reset after ms;
--              or 'error', message, 0, 0 for a decision whose command failed;
--              or 'not-local', error when a key is not served here, having written nothing

-- Prelude: integer division as in src/algorithms/integer.ts, the call's clock, key ownership, TTLs.
local floor, max = math.floor, math.max -- locals: a global's field costs two lookups a call
local function floor_div(a, b)
  local q = floor(a / b)
  if q * b > a then return q - 1 end
  return q
end
local function ceil_div(a, b) return -floor_div(-a, b) end
local now_ms = tonumber(ARGV[1])
if not now_ms then
  local t = redis.call('TIME')
  now_ms = tonumber(t[1]) * 1000 + floor(tonumber(t[2]) / 1000)
end
-- Every TTL a script sets: the time until the key is fresh again, but at least a second. Redis
-- 7.0 deletes a key at once when PEXPIRE's expiry is past by its clock read again inside the
-- command, as a 1 or 2 ms TTL is whenever the millisecond ticks: the next decision on that key,
-- in this call or another in that ms, would find it fresh and admit again. Any state read after
-- its time until fresh decodes as fresh, so a longer TTL costs memory only. (TTLs set once after
-- the last decision would not do: a key without one reads as unowned to the decisions between.)
-- The floor goes as a string: Redis 7.0 writes a number argument with %.17g, ~3k instructions.
local function ttl_ms(until_fresh_ms)
  if until_fresh_ms > 1000 then return until_fresh_ms end
  return '1000'
end

-- The rule: its parameters, its state for the call, one decision.
local limit = tonumber(ARGV[2])
local window = tonumber(ARGV[3])
-- A key without a TTL was not written by Sluice: drop it, so it is decided as new state.
-- Returns whether it was dropped.
local function fresh_if_unowned(key)
  if redis.call('PTTL', key) ~= -1 then return false end
  redis.call('DEL', key)
  return true
end
local function decide(key, cost, commit, i)
  fresh_if_unowned(key)
  local state = redis.call('HMGET', key, 'n', 'e')
  local count = tonumber(state[1]) or 0
  local window_end = tonumber(state[2]) or 0
  -- The end goes back as read: Redis before 7.2 writes a number argument with %.17g.
  local stored_end = state[2]
  local now = now_ms
  if now >= window_end then
    count = 0
    window_end = now + window -- the key's next window opens with this request
    stored_end = window_end
  else
    now = max(now, window_end - window) -- a clock behind the window's start counts in it
  end
  local allowed, used, retry = 0, count, -1 -- denied for good: cost > limit
  if cost <= limit then
    if count + cost > limit then
      retry = window_end - now
    else
      allowed, used, retry = 1, count + cost, 0
      if commit and cost > 0 then
        redis.call('HSET', key, 'n', used, 'e', stored_end)
        redis.call('PEXPIRE', key, ttl_ms(window_end - now))
      end
    end
  end
  return allowed, limit - used, retry, used > 0 and window_end - now or 0
end

-- The call: each decision in turn, under pcall.
-- Partial admission (src/algorithms/partial.ts): as many of cost as the key holds now. A cost-0
-- decision's remaining is exactly that; none held is a denial waiting for one unit.
-- Replies -1 when denied, else 2 + the units admitted.
local function decide_partly(key, cost, commit, i)
  local _, held = decide(key, 0, false, i)
  if held >= cost then held = cost end
  if held == 0 and cost > 0 then
    local _, remaining, retry, reset = decide(key, 1, false, i)
    return -1, remaining, retry, reset
  end
  local _, remaining, retry, reset = decide(key, held, true, i)
  return 2 + held, remaining, retry, reset
end
-- A decision's one number (costArg in compose.ts): its cost, whether to apply it, and the
-- rule deciding it; a half above a peek's is a partial request.
local function cost_of(arg)
  local n = tonumber(arg)
  if n >= 0 then return n, true, decide end
  n = -1 - n
  if n % 1 == 0 then return n, false, decide end
  return n + 0.5, true, decide_partly
end
-- A blocked key (its block key holds the block's end, ms) denies whatever the rule says:
-- allowed -2, nothing spent, retry at the later of the block's end and the rule's own retry
-- (a partial request's own retry is one unit's).
local function decide_blocked(block_end, rule, key, cost, i)
  local left = block_end - now_ms
  if rule ~= decide and cost > 1 then cost = 1 end
  local allowed, _, retry, reset = decide(key, cost, false, i)
  if allowed == 1 then retry = 0 end
  if retry ~= -1 then retry = max(retry, left) end
  return -2, 0, retry, max(reset, left)
end
-- A same-slot call reads every key's block in one MGET before its first decision (a run of
-- one key, as a hot key's batch is, named once), kept for the blocked keys only: a GET per key
-- doubled the commands a batched decision runs (its SET is the other). A string state rides in
-- the same MGET, so one key's call reads its state and its block in one command, not two.
-- Otherwise each key's block is read alone, once per key and call: a call of one key of a
-- state that is no string; the per-master path, whose keys span slots (a Cluster refuses an
-- MGET over slots, and counts it as an error reply); and a slot being migrated, where a block
-- key not (or no longer) on this node errors, and so does the MGET, and only the keys not here
-- read as unblocked.
local blocks_read, block_ends = false, {}
local function read_block(key)
  local found = redis.pcall('GET', key .. ':block')
  local block_end = type(found) == 'string' and tonumber(found) or false
  block_ends[key] = block_end
  return block_end
end
local function decide_one(rule, key, cost, commit, i)
  local block_end = block_ends[key]
  if block_end == nil and not blocks_read then block_end = read_block(key) end
  if block_end and block_end > now_ms then return decide_blocked(block_end, rule, key, cost, i) end
  return rule(key, cost, commit, i)
end
-- A failing command fails its own decision; the call's others stand as if alone.
-- decide_from(from) decides from, from + 1, ... into replies, setting deciding to each one's
-- number before it decides; a failure outside a decision (a cost argument) fails the call.
local replies, deciding = {}, 0
local function decide_all(decide_from)
  local from = 1
  while true do
    local ok, failure = pcall(decide_from, from)
    if ok then return end
    local at = 4 * deciding
    if deciding < from or replies[at] ~= nil then error(failure, 0) end
    if type(failure) == 'table' then failure = failure.err end
    replies[at - 3], replies[at - 2], replies[at - 1], replies[at] = 'error', tostring(failure), 0, 0
    from = deciding + 1
  end
end
local n = tonumber(ARGV[#ARGV])
local first = #ARGV - 1 - 2 * n
for i = 1, n do
  local found = redis.pcall('EXISTS', ARGV[first + 2 * i - 1])
  if type(found) == 'table' and found.err then return {'not-local', found.err} end
end
local function decide_from(from)
  for i = from, n do
    local at, arg = 4 * i, first + 2 * i
    local cost, commit, rule = cost_of(ARGV[arg])
    deciding = i
    replies[at - 3], replies[at - 2], replies[at - 1], replies[at] = decide_one(rule, ARGV[arg - 1], cost, commit)
  end
end
decide_all(decide_from)
return replies

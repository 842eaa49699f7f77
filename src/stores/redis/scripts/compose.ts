import { defineScript, type LuaScript } from '../script.js';

/*
 * Every algorithm script is PRELUDE + the algorithm's body + LOOP, so one script decides one
 * key or a batch of keys atomically, in one round trip.
 *
 * ARGV layout: [1] now in ms, or '' for the server's TIME; [2 .. 1+P] the algorithm's integer
 * parameters (`Algorithm.scriptParams`); then one integer per key in KEYS (see {@link costArg}):
 * the cost to apply if admitted, or −1 − cost to only report it (a peek); or a single one that
 * every key shares, which is how a batch of like decisions (the usual cost of 1) travels.
 * Reply: 4 integers per key, {allowed 0|1, remaining, retryAfterMs (−1: never), resetAfterMs};
 * or {'error', message, 0, 0} for a decision one of whose commands failed (see DECIDE_ONE).
 * Integers only: Redis truncates Lua floats in replies.
 *
 * The body reads its parameters from ARGV[2..] and defines `decide(key, cost, commit, i)`,
 * returning the four integers for one key as four values (no table per decision: the loop is
 * the hot path of a batch); `i` is the decision's place in KEYS, for `read_ahead`. Helpers
 * below are the Lua twins of src/algorithms/integer.ts, so memory and Redis agree to the unit.
 * Numbers go to redis.call as numbers: Redis writes them with 17 significant digits, so
 * integers up to 2^53 are stored in full. (`string.format('%d')` is cheaper on Redis 7.0, which
 * converts with `%.17g`, but dearer on Valkey 8, which converts faster: docs/deployment.md.)
 */
const PRELUDE = `
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
-- A key without a TTL was not written by Sluice: drop it, so it is decided as new state.
-- Returns whether it was dropped.
local function fresh_if_unowned(key)
  if redis.call('PTTL', key) ~= -1 then return false end
  redis.call('DEL', key)
  return true
end
-- Runs once after a call's last decision. An algorithm that keeps a key's new state in Lua
-- between the decisions of one call (a hot key in a batch) writes it here, once per key.
local write_back = function() end
-- Runs once before the first decision of a call whose keys share one slot, given them all.
-- An algorithm keeping one string per key reads them here in one MGET, not one GET each.
local read_ahead = function() end
-- A decision's one integer: its cost and whether to apply it (costArg in compose.ts).
local function cost_of(arg)
  local n = tonumber(arg)
  if n >= 0 then return n, true end
  return -1 - n, false
end
`;

/*
 * Each decision runs under pcall. A command that fails (a key of another type under the prefix,
 * a write refused over maxmemory) then fails that decision alone, as it would in a call of its
 * own, and the call's other decisions stand: without it, the error would end the script with
 * the decisions before it applied yet every one of them reported failed. Costs ~2 % of Redis CPU
 * per decision (callgrind).
 */
const DECIDE_ONE = `
local function decide_one(key, cost, commit, i)
  local ok, allowed, remaining, retry, reset = pcall(decide, key, cost, commit, i)
  if ok then return allowed, remaining, retry, reset end
  if type(allowed) == 'table' then allowed = allowed.err end
  return 'error', tostring(allowed), 0, 0
end
`;

const LOOP = `${DECIDE_ONE}
read_ahead(KEYS)
local replies = {}
local per_key = #ARGV > costs_at -- else ARGV[costs_at] is every key's
local cost, commit = cost_of(ARGV[costs_at])
for i = 1, #KEYS do
  if per_key then cost, commit = cost_of(ARGV[costs_at - 1 + i]) end
  local at = 4 * i
  replies[at - 3], replies[at - 2], replies[at - 1], replies[at] = decide_one(KEYS[i], cost, commit, i)
end
write_back()
return replies
`;

/*
 * The per-node variant decides keys of many slots that one Cluster master serves. Redis
 * refuses CROSSSLOT for declared KEYS before it reads a script's flags, so only the first key
 * is declared (KEYS[1]) and every key travels in ARGV; `allow-cross-slot-keys` (Redis ≥ 7.0,
 * Valkey) lets the script touch them. A script is not a transaction: a key found not to be
 * served here halfway through would leave the keys before it charged. So a pre-pass asks
 * EXISTS of every key first, under pcall: a key of a slot this node does not serve (stale map)
 * or a key missing from a slot it is migrating away errors, and the script returns
 * {'not-local', error} having written nothing.
 *
 * ARGV layout: [1] now, [2 .. 1+P] parameters, then one (key, costArg) pair per decision,
 * then the number of decisions n. Reply: 4 integers per decision, or the 2-element
 * not-local reply.
 */
const NODE_LOOP = `${DECIDE_ONE}
local n = tonumber(ARGV[#ARGV])
local first = #ARGV - 1 - 2 * n
for i = 1, n do
  local found = redis.pcall('EXISTS', ARGV[first + 2 * i - 1])
  if type(found) == 'table' and found.err then return {'not-local', found.err} end
end
local replies = {}
for i = 1, n do
  local at, arg = 4 * i, first + 2 * i
  local cost, commit = cost_of(ARGV[arg])
  replies[at - 3], replies[at - 2], replies[at - 1], replies[at] = decide_one(ARGV[arg - 1], cost, commit)
end
write_back()
return replies
`;

/**
 * A decision's argument: `cost` (a non-negative integer) to apply it if admitted, `−1 − cost` to
 * only report it (a peek). One integer instead of a (cost, commit) pair spares Redis one
 * argument per decision.
 */
export function costArg(cost: number, commit: boolean): number {
  return commit ? cost : -1 - cost;
}

/**
 * Builds an algorithm's script from its body (which defines `decide(key, cost, commit, i)`) and
 * the number of parameters the body reads from ARGV[2 ..].
 */
export function algorithmScript(params: number, body: string): LuaScript {
  return defineScript(`${PRELUDE}local costs_at = ${2 + params}\n${body}${LOOP}`);
}

/**
 * A call's cost arguments (one {@link costArg} per decision, in order): the one they all share
 * when they are alike, so Redis parses one argument instead of one per decision.
 */
export function sharedCostArgs(costs: readonly number[]): readonly number[] {
  const first = costs[0];
  for (const cost of costs) if (cost !== first) return costs;
  return costs.slice(0, 1);
}

/** The per-node variant of a script {@link algorithmScript} built (see NODE_LOOP). */
export function perNodeScript(script: LuaScript): LuaScript {
  if (!script.source.endsWith(LOOP)) throw new Error('not an algorithm script');
  return defineScript(`#!lua flags=allow-cross-slot-keys${script.source.slice(0, -LOOP.length)}${NODE_LOOP}`);
}

/**
 * Builds an algorithm's refund script from its body (which defines `refund(key, units)`).
 * ARGV: [1] now in ms or '', [2 .. 1+P] the algorithm's parameters, [2+P] units to give back.
 * Reply: 1. One key per call: refunds are rare (lease return), so they need no batch loop.
 */
export function refundScript(body: string): LuaScript {
  return defineScript(`${PRELUDE}${body}\nrefund(KEYS[1], tonumber(ARGV[#ARGV]))\nreturn 1\n`);
}

import type { AlgorithmName } from '../../../algorithms/types.js';
import { scriptShas } from '../lua/shas.js';
import type { LuaScript } from '../script.js';
import { BLOCK_SUFFIX } from './block-key.js';

/**
 * An algorithm's Lua twin, as named blocks of Lua that the composer places: the composer owns
 * the prelude, each function's signature and the loop over a call's decisions; the algorithm
 * owns its rule. The result of each composition is committed as src/stores/redis/lua/<name>.lua
 * (`npm run lua:snapshots`), where it reads top to bottom.
 *
 * Every block may read the prelude: `floor`, `max` (math's), `floor_div(a, b)` and
 * `ceil_div(a, b)` (twins of src/algorithms/integer.ts, so memory and Redis agree to the unit),
 * `now_ms` (the call's clock, integer ms), `fresh_if_unowned(key)` (drops a key Sluice did not
 * write, returns whether it did) and `ttl_ms(ms)` (every TTL a block sets: ms, but at least 1 s;
 * an argument for `redis.call` only, as the floor is a string); and each parameter, a number in a
 * local named as in `params`.
 * Numbers go to redis.call as numbers: Redis writes them with 17 significant digits, so integers
 * up to 2^53 are stored in full. (`string.format('%d')` is cheaper on Redis before 7.2, which
 * converts with `%.17g`, but dearer on Valkey 8, which converts faster: every GCRA `SET` picks by
 * `redis.REDIS_VERSION_NUM`, and fixed window writes an open window's end back as the string it
 * read; docs/deployment.md.)
 */
export interface LuaAlgorithm {
  /** The algorithm's name, which names its snapshots (`gcra.lua`, `gcra.per-master.lua`, …). */
  readonly name: AlgorithmName;
  /** The snapshot's first line: the algorithm and its core twin. */
  readonly title: string;
  /** What a key holds (type, fields, units) and its TTL, for the snapshot's header. */
  readonly key: string;
  /** ARGV[2 ..] in `Algorithm.scriptParams` order: each parameter's Lua name and its meaning and unit. */
  readonly params: readonly (readonly [name: string, doc: string])[];
  /**
   * Statements run once per call before the one-key path and `state`: numbers derived from the
   * parameters and the clock, and the rule's helpers when that path calls them (no table: each
   * call would make one).
   */
  readonly derived?: string;
  /** Statements run once per call before its first decision: helpers and the call's own state. */
  readonly state?: string;
  /**
   * Whether a key's state is one string (GCRA's TAT). A same-slot call then reads every key's
   * state together with its block in one MGET before its first decision, into `stored`
   * (by decision: `stored[i]` is KEYS[i]'s value, false when Redis holds no string there);
   * `decide` reads a key itself where `stored[i]` is nil (the per-master path, whose keys span
   * slots). Without it, the composer reads only the blocks and `decide` reads its own state.
   */
  readonly stringState?: boolean;
  /**
   * The body of the one-key path, the plain limiter's common call (one key, one cost, committed,
   * no block key) decided straight through before the general path's functions exist. It reads
   * `key`, `cost` (an integer ≥ 0), the parameters and `derived`, and of the prelude all but
   * `fresh_if_unowned`; with `stringState`, also `value` (the key's stored string, false when
   * none, read with its block in one MGET that the general path reuses), otherwise it reads the
   * key itself. Either it returns that decision's reply, `{ allowed, remaining, retry, reset }`,
   * having written what the admission spends, or it ends without returning, having written
   * nothing, and leaves the call to the general path.
   */
  readonly oneKey?: string;
  /**
   * Body of `decide(key, cost, commit, i)`: decides `cost` units (an integer ≥ 0) for `key`,
   * applying them only when admitted and `commit` is true. `i` is the decision's place in KEYS,
   * nil on the per-master path. Returns four integers as four values (no table per decision: this
   * is the hot path): allowed (0|1), remaining units, retry after ms (−1: never), reset after ms.
   * Integers only: Redis truncates Lua floats in replies. A failing command raises; the composer
   * fails that decision alone.
   */
  readonly decide: string;
  /**
   * Body of `write_back()`, called once after a call's last decision, on both paths: writes the
   * state `decide` kept in Lua between the decisions of one call (a hot key in a batch), once
   * per key.
   */
  readonly writeBack?: string;
  /**
   * Body of `refund(key, units)` for the algorithm's refund script: gives `units` back to `key`.
   * Omitted: the algorithm's Redis limiter has no `refund`.
   */
  readonly refund?: string;
  /**
   * Body of `charge(key, units)` for the algorithm's charge script: spends `units` of `key`
   * without the admission check, as debt (a reservation settled above its estimate). Omitted:
   * the algorithm's Redis limiter has no `charge`.
   */
  readonly charge?: string;
}

/** A decision script, with its per-master twin (see {@link perNodeScript}). */
export interface AlgorithmScript extends LuaScript {
  readonly perNode: LuaScript;
}

/** The prelude's integer helpers and the call's clock (see {@link PRELUDE}). */
const CLOCK = `
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
`;

/** The prelude's key ownership (see {@link PRELUDE}). */
const OWNERSHIP = `-- A key without a TTL was not written by Sluice: drop it, so it is decided as new state.
-- Returns whether it was dropped.
local function fresh_if_unowned(key)
  if redis.call('PTTL', key) ~= -1 then return false end
  redis.call('DEL', key)
  return true
end
`;

/** The prelude's TTL rule (see {@link PRELUDE}). */
const TTLS = `-- Every TTL a script sets: the time until the key is fresh again, but at least a second. Redis
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
`;

/**
 * What every script starts with: integer helpers, the call's clock, key ownership, TTLs. A
 * decision script makes `fresh_if_unowned` after its one-key path, which does without it.
 */
const PRELUDE = `${CLOCK}${OWNERSHIP}${TTLS}`;

/*
 * Each decision runs under pcall. A command that fails (a key of another type under the prefix,
 * a write refused over maxmemory) then fails that decision alone, as it would in a call of its
 * own, and the call's other decisions stand: without it, the error would end the script with
 * the decisions before it applied yet every one of them reported failed. One pcall runs a call's
 * decisions, and after a failure the next resumes behind the failed one: a pcall per decision
 * cost ~1k Redis instructions of ~40k (callgrind, Redis 7.0.15, calls of 100 keys).
 */
const DECIDE_ONE = `
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
  local found = redis.pcall('GET', key .. '${BLOCK_SUFFIX}')
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
`;

/**
 * The per-slot loop's read of its call's blocks (`blocks_read`, `block_ends`: DECIDE_ONE's),
 * after the keys themselves when `with_states`: returns KEYS[i]'s value at i, or nil when the
 * MGET failed. A run of one key (a hot key's batch) is named once, its state and its block: a
 * name per decision cost a hot key's batch ~1.4k of ~14k Redis instructions per decision.
 */
const READ_BLOCKS = `local function read_blocks(keys, with_states)
  local runs, n, last = {}, 0, nil
  for i = 1, #keys do
    if keys[i] ~= last then
      last, n = keys[i], n + 1
      runs[n] = last
    end
  end
  local names = with_states and { unpack(runs) } or {}
  local first = #names
  for r = 1, n do names[first + r] = runs[r] .. '${BLOCK_SUFFIX}' end
  local found = redis.pcall('MGET', unpack(names))
  if found.err then return nil end
  for r = 1, n do
    if found[first + r] then block_ends[runs[r]] = tonumber(found[first + r]) end
  end
  blocks_read = true
  if n == #keys or not with_states then return found end
  local stored, r = {}, 0
  last = nil
  for i = 1, #keys do
    if keys[i] ~= last then last, r = keys[i], r + 1 end
    stored[i] = found[r]
  end
  return stored
end
`;

/**
 * A one-key call's read of a string state and its block: the same MGET as `read_blocks` without
 * its tables and loops, which for one key cost more than the GET the MGET saves (callgrind on
 * Redis 7.0.15, instructions per decision: +2–3k through `read_blocks`, 1–3k fewer this way).
 * `found`: that MGET's reply when the one-key path read it already.
 */
const READ_ONE = `local function read_one(key, found)
  found = found or redis.pcall('MGET', key, key .. '${BLOCK_SUFFIX}')
  if found.err then return nil end
  if found[2] then block_ends[key] = tonumber(found[2]) end
  blocks_read = true
  return found
end
`;

/**
 * The per-slot loop's reads before its first decision: a string state with the blocks, or the
 * state alone when that MGET failed (then each block is read alone); otherwise the blocks of a
 * call of more than one key.
 */
function readsAhead(lua: LuaAlgorithm): string {
  if (!lua.stringState) {
    if (lua.oneKey === undefined) return 'if #KEYS > 1 then read_blocks(KEYS) end\n';
    // The one-key path's GET of its block, read as read_block reads one.
    return `if #KEYS > 1 then
  read_blocks(KEYS)
elseif one_block ~= nil then
  block_ends[KEYS[1]] = type(one_block) == 'string' and tonumber(one_block) or false
end
`;
  }
  const read = lua.oneKey === undefined ? 'read_one(KEYS[1])' : 'read_one(KEYS[1], one_read)';
  return `${READ_ONE}if #KEYS == 1 then stored = ${read} else stored = read_blocks(KEYS, true) end
stored = stored or redis.call('MGET', unpack(KEYS))
`;
}

/** A string state's values, read ahead by the per-slot loop (`LuaAlgorithm.stringState`). */
const STORED = `-- The stored values of a same-slot call, by decision, from the MGET that reads their blocks.
-- MGET reads a key holding no string as false, so a key of another type under the prefix, like
-- one holding no number, is decided as fresh and replaced on every path.
local stored
`;

/** The per-master path reads no state ahead: its keys span slots, so `decide` reads each. */
const NONE_STORED = 'local stored = {} -- none read ahead: decide reads each key, its slot may differ\n';

/**
 * A same-slot call's costs, ahead of the rule so the one-key path reads them too: where they
 * start in ARGV (after the clock and the parameters), whether each key has its own, and the
 * first, parsed once (a string's tonumber is a strtod).
 */
function callCosts(lua: LuaAlgorithm): string {
  return `
-- The call's costs: one per key, or one for every key when they are alike.
local costs_at = ${2 + lua.params.length}
local per_key = #ARGV > costs_at
local shared_cost = tonumber(ARGV[costs_at])
`;
}

/*
 * Each `local function` of the general path is a closure made anew on every call: with its
 * tables, pcall and the loop, they made a plain one-key GCRA decision cost Redis a third more
 * than deciding it straight through (callgrind on Redis 7.0.15, instructions per EVALSHA:
 * 108k against 81k admitted, 87k against 62k denied). So that call is decided before any is made.
 */
function oneKeyPath(lua: LuaAlgorithm): string {
  if (lua.oneKey === undefined) return '';
  const blockRule = '-- A block key lives as long as its block (block.lua): any is left to the general path.';
  // A string state rides in the block's MGET; any other state is read by the body, and again by
  // the general path when it falls through. The general path reuses the block's read.
  const [reused, read] = lua.stringState
    ? [
        'MGET: a batch, per-key costs, a peek, a partial request, a block, a failed read, and what the\n-- rule leaves to it.',
        `local one_read
if #KEYS == 1 and not per_key and shared_cost >= 0 then
  local key, cost = KEYS[1], shared_cost
  one_read = redis.pcall('MGET', key, key .. '${BLOCK_SUFFIX}')
  ${blockRule}
  if not one_read.err and not one_read[2] then
    local value = one_read[1]`,
      ]
    : [
        'GET of the block: a batch, per-key costs, a peek, a partial request, a block, a failed\n-- read, and what the rule leaves to it.',
        `local one_block
if #KEYS == 1 and not per_key and shared_cost >= 0 then
  local key, cost = KEYS[1], shared_cost
  one_block = redis.pcall('GET', key .. '${BLOCK_SUFFIX}')
  ${blockRule}
  if one_block == false then`,
      ];
  return `
-- One key, one cost, committed (the plain limiter's limit()) and no block key: decided here,
-- straight through. Anything else falls through to the general path below, which reuses this
-- ${reused}
${read}
${indent(block(lua.oneKey), 4)}  end
end
`;
}

/**
 * `oneKey` and `decide` of an algorithm whose state is a hash of `fields`, from its rule:
 * `rule(admit)` decides `cost` on `state` (the HMGET of `fields`) and runs `admit` when admitted,
 * `store` writes an admission, `reply` is the decision's four values. The one-key path leaves to
 * the general path a key without a TTL, which that path drops as unowned, and a key of another
 * type, whose read fails that decision there.
 */
export function hashDecisions(
  fields: readonly string[],
  rule: (admit: string) => string,
  store: string,
  reply: string,
): { readonly oneKey: string; readonly decide: string } {
  const read = `redis.pcall('HMGET', key, ${fields.map((field) => `'${field}'`).join(', ')})`;
  const admit = (when: string) => `if ${when} then\n        ${store.replace(/\n/g, '\n        ')}\n      end`;
  return {
    oneKey: `
-- A key without a TTL is left to the general path, which drops it as unowned; so is a key of
-- another type, whose read fails that decision there.
local state = redis.call('PTTL', key) ~= -1 and ${read}
if state and not state.err then
${rule(admit('cost > 0'))}
  return { ${reply} }
end`,
    decide: `
  fresh_if_unowned(key)
  local state = ${read.replace('pcall', 'call')}
${rule(admit('commit and cost > 0'))}
  return ${reply}`,
  };
}

/** Lua text moved right by `spaces`, blank lines left blank. */
function indent(text: string, spaces: number): string {
  return text.replace(/^(?=.)/gm, ' '.repeat(spaces));
}

/** The per-slot loop: decision i decides KEYS[i]. */
function slotLoop(lua: LuaAlgorithm): string {
  return `${DECIDE_ONE}${READ_BLOCKS}${readsAhead(lua)}local cost, commit, rule = cost_of(shared_cost)
local function decide_from(from)
  for i = from, #KEYS do
    if per_key then cost, commit, rule = cost_of(ARGV[costs_at - 1 + i]) end
    local at = 4 * i
    deciding = i
    replies[at - 3], replies[at - 2], replies[at - 1], replies[at] = decide_one(rule, KEYS[i], cost, commit, i)
  end
end
decide_all(decide_from)
${lua.writeBack ? 'write_back()\n' : ''}return replies
`;
}

/*
 * The per-master loop decides keys of many slots that one Cluster master serves. Redis refuses
 * CROSSSLOT for declared KEYS before it reads a script's flags, so only the first key is declared
 * (KEYS[1]) and every key travels in ARGV; `allow-cross-slot-keys` (Redis ≥ 7.0, Valkey) lets the
 * script touch them. A script is not a transaction: a key found not to be served here halfway
 * through would leave the keys before it charged. So a pre-pass asks EXISTS of every key first,
 * under pcall: a key of a slot this node does not serve (stale map) or a key missing from a slot
 * it is migrating away errors, and the script returns {'not-local', error} having written nothing.
 */
function masterLoop(lua: LuaAlgorithm): string {
  return `${DECIDE_ONE}local n = tonumber(ARGV[#ARGV])
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
${lua.writeBack ? 'write_back()\n' : ''}return replies
`;
}

const NOW_ROW = ['ARGV[1]', "now, ms; '' for the server's TIME"] as const;
const COST_DOC =
  'cost in units to apply if admitted,\nor -1 - cost to only report it (a peek),\nor -0.5 - cost to admit as many of cost as are held (partial)';
const REPLY_ROW = [
  'Reply',
  "4 integers per decision: allowed 0|1 (-2: denied by a block; partial: -1 denied,\nelse 2 + units admitted),\nremaining units, retry after ms (-1: never), reset after ms;\nor 'error', message, 0, 0 for a decision whose command failed",
] as const;

/** A comment table, one row per entry: a label and its text, whose later lines align under it. */
function header(lines: readonly string[], rows: readonly (readonly [string, string])[]): string {
  const width = Math.max(...rows.map(([label]) => label.length)) + 2;
  const table = rows.flatMap(([label, text]) =>
    text.split('\n').map((line, at) => `${(at === 0 ? label : '').padEnd(width)}${line}`),
  );
  return `${[...lines, '', ...table].map((line) => `-- ${line}`.trimEnd()).join('\n')}\n`;
}

function origin(name: string): string {
  return `Composed from src/stores/redis/scripts/${name}.ts by compose.ts (npm run lua:snapshots).`;
}

function paramRows(lua: LuaAlgorithm): [string, string][] {
  return lua.params.map(([name, doc], at) => [`ARGV[${2 + at}]`, `${name}: ${doc}`]);
}

function paramLocals(lua: LuaAlgorithm): string {
  return lua.params.map(([name], at) => `local ${name} = tonumber(ARGV[${2 + at}])\n`).join('');
}

/** Lua text from a template literal, without the newlines that open and close it. */
function block(text: string | undefined): string {
  return text === undefined ? '' : `${text.replace(/^\n|\n$/g, '')}\n`;
}

function fn(signature: string, body: string | undefined): string {
  return body === undefined ? '' : `local function ${signature}\n${block(body)}end\n`;
}

/**
 * The rule: the algorithm's blocks in reading order, with the per-slot loop's one-key path after
 * the numbers it reads and before every function and table of the general path.
 */
function rule(lua: LuaAlgorithm, loop: 'slot' | 'master'): string {
  return [
    '\n-- The rule: its parameters, its state for the call, one decision.\n',
    paramLocals(lua),
    block(lua.derived),
    loop === 'slot' ? oneKeyPath(lua) : '',
    OWNERSHIP,
    lua.stringState ? (loop === 'slot' ? STORED : NONE_STORED) : '',
    block(lua.state),
    fn('decide(key, cost, commit, i)', lua.decide),
    fn('write_back()', lua.writeBack),
  ].join('');
}

/** A script Sluice ships, named by its snapshot, with the SHA-1 committed beside the snapshots. */
export function shippedScript(name: string, source: string): LuaScript {
  // A name missing from shas.ts (a script not yet snapshotted) still runs, by EVAL after
  // NOSCRIPT; the snapshot test fails until `npm run lua:snapshots` records it.
  return { source, sha: scriptShas[name] ?? '' };
}

/**
 * The algorithm's decision script: one key, or a batch of keys sharing one slot, decided in
 * order in one atomic call. Its per-master twin rides along as `perNode`.
 */
export function algorithmScript(lua: LuaAlgorithm): AlgorithmScript {
  const slot = header(
    [lua.title, 'Decides each key of KEYS in order, in one atomic call.', origin(lua.name)],
    [
      ['KEYS[i]', lua.key],
      NOW_ROW,
      ...paramRows(lua),
      [`ARGV[${2 + lua.params.length}..]`, `one per key: its ${COST_DOC};\none for every key when they are alike`],
      REPLY_ROW,
    ],
  );
  const master = header(
    [lua.title, 'Decides keys of many slots that this Cluster master serves, in one atomic call.', origin(lua.name)],
    [
      ['KEYS[1]', "the first decision's key, declared for routing only: every key travels in ARGV"],
      ['each key', lua.key],
      NOW_ROW,
      ...paramRows(lua),
      [`ARGV[${2 + lua.params.length}..]`, `per decision, a pair: its key, then its ${COST_DOC}`],
      ['ARGV[#ARGV]', 'n, the number of decisions'],
      [REPLY_ROW[0], `${REPLY_ROW[1]};\nor 'not-local', error when a key is not served here, having written nothing`],
    ],
  );
  return {
    ...shippedScript(lua.name, `${slot}${CLOCK}${TTLS}${callCosts(lua)}${rule(lua, 'slot')}${slotLoop(lua)}`),
    perNode: shippedScript(
      `${lua.name}.per-master`,
      `#!lua flags=allow-cross-slot-keys\n${master}${CLOCK}${TTLS}${rule(lua, 'master')}${masterLoop(lua)}`,
    ),
  };
}

/** What each one-key script does, for its snapshot's header: its doc line and its units' meaning. */
const ADJUSTMENTS = {
  refund: ["Refund: gives units back to one key (a lease's unused units).", 'units to give back'],
  charge: ['Charge: spends units of one key as debt, without the admission check.', 'units to charge'],
} as const;

/**
 * The algorithm's refund or charge script: gives units back to one key (a lease's return) or
 * charges them as debt (a reservation settled above its estimate). Both are rare, so they have
 * no batch loop, and read only the prelude, the parameters and their own block.
 */
export function adjustScript<Kind extends keyof typeof ADJUSTMENTS>(
  lua: LuaAlgorithm & { readonly [K in Kind]: string },
  kind: Kind,
): LuaScript {
  const [doc, units] = ADJUSTMENTS[kind];
  const top = header(
    [lua.title, doc, origin(lua.name)],
    [['KEYS[1]', lua.key], NOW_ROW, ...paramRows(lua), [`ARGV[${2 + lua.params.length}]`, units], ['Reply', '1']],
  );
  return shippedScript(
    `${lua.name}.${kind}`,
    `${top}${PRELUDE}\n-- The rule: its parameters, one ${kind}.\n${paramLocals(lua)}${fn(`${kind}(key, units)`, lua[kind])}${kind}(KEYS[1], tonumber(ARGV[#ARGV]))\nreturn 1\n`,
  );
}

/**
 * The script of one admin operation on one key (`<name>.<operation>.lua`): runs `body` as
 * `operate(key, units)` with the prelude and the algorithm's parameters (and what `uses` names
 * of its rule: its state block, or that and `decide`), then publishes the invalidation message
 * on the channel when one is given, in the same atomic call.
 */
export function operationScript(
  lua: LuaAlgorithm,
  operation: string,
  summary: string,
  body: string,
  uses: 'parameters' | 'state' | 'decide' = 'parameters',
): LuaScript {
  const units = 2 + lua.params.length;
  const top = header(
    [lua.title, summary, origin(lua.name)],
    [
      ['KEYS[1]', lua.key],
      NOW_ROW,
      ...paramRows(lua),
      [`ARGV[${units}]`, 'units'],
      [`ARGV[${units + 1}..${units + 2}]`, "the invalidation channel and message ('' '': none)"],
      ['Reply', '1'],
    ],
  );
  return shippedScript(
    `${lua.name}.${operation}`,
    `${top}${PRELUDE}\n-- The rule: its parameters, the operation.\n${paramLocals(lua)}${uses === 'parameters' ? '' : block(lua.derived) + block(lua.state)}${uses === 'decide' ? fn('decide(key, cost, commit, i)', lua.decide) : ''}${fn('operate(key, units)', body)}operate(KEYS[1], tonumber(ARGV[${units}]))\nif ARGV[${units + 1}] ~= '' then redis.call('PUBLISH', ARGV[${units + 1}], ARGV[${units + 2}]) end\nreturn 1\n`,
  );
}

/** The per-master twin of a decision script (see {@link algorithmScript}). */
export function perNodeScript(script: AlgorithmScript): LuaScript {
  return script.perNode;
}

/**
 * How a decision spends: `true` applies it if admitted, `false` only reports it (a peek),
 * `'partial'` admits as many of its cost as the key holds.
 */
export type Commit = boolean | 'partial';

/**
 * Most units one partial request asks the script for: halves are exact below 2^52. No key holds
 * more than its algorithm's `limit`, so asking for min(cost, limit) admits the same.
 */
export const MAX_PARTIAL_COST = 2 ** 52 - 1;

/**
 * A decision's argument: `cost` (a non-negative integer) to apply it if admitted, `−1 − cost` to
 * only report it (a peek), `−0.5 − cost` to admit as many of `cost` as are held (partial; cost at
 * most {@link MAX_PARTIAL_COST}). One number instead of a (cost, mode) pair spares Redis one
 * argument per decision, and the common case (`n >= 0`) stays one comparison.
 */
export function costArg(cost: number, commit: Commit): number {
  if (commit === 'partial') return -0.5 - cost;
  return commit ? cost : -1 - cost;
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

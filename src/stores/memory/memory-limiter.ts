import { blockedDecision, blockMsOf, createLocalInvalidations, unsupported } from '../../admin.js';
import { algorithmFor } from '../../algorithms/params.js';
import { admitPartially } from '../../algorithms/partial.js';
import type { Algorithm, StateGrowth } from '../../algorithms/types.js';
import { type Decision, type LimitOptions, type ParamsOptions, peekDecision } from '../../decision.js';
import { ClockError } from '../../errors.js';
import { type Clock, monotonicClock, readClock, type SyncLimiter } from '../../limiter.js';
import {
  checkKey,
  costOf,
  type OptionNames,
  orDefault,
  partialOf,
  requireAlgorithm,
  requireDurationMs,
  requireFunction,
  requireInteger,
  requireOptions,
} from '../../validate.js';
import { createBlockTable } from './block-table.js';
import { freshnessOf } from './freshness.js';
import { createSlotTable, type SlotTable, slotBytes } from './slot-table.js';

/** Options of {@link createMemoryLimiter}. */
export interface MemoryLimiterOptions {
  /** The algorithm core, e.g. `gcra({ limit: 100, periodMs: 60_000 })`. */
  algorithm: Algorithm;
  /**
   * Most keys held at once (keys are often attacker-controlled, so the store is bounded).
   * When full, expired state goes first, then a key not used since it went in or since the
   * eviction hand last passed it (SIEVE, a CLOCK that lets a flood of keys seen once go before a
   * key seen twice), whose next request then starts fresh. Default 100,000.
   */
  maxKeys?: number;
  /**
   * Most bytes of state held at once, evicting as `maxKeys` does when a new key or a growing
   * log would pass it. Counts the typed arrays holding state (`8 × slots + 1` bytes per key
   * slot of a fixed-size algorithm; a sliding-window log's own array, growing by doubling up to
   * `8 × (limit + 2)` bytes); keys themselves add at most `maxKeys × ~1.1 KB` of heap.
   * Default 64 MiB, or `maxKeys` keys of a fixed-size algorithm if more. At least one key's
   * largest state; {@link ConfigError} otherwise.
   */
  maxBytes?: number;
  /**
   * Milliseconds clock; default monotonic `performance.now()`. Read once per call; a reading
   * that is not a number in 0..`MAX_CLOCK_MS` makes that call throw {@link ClockError}.
   */
  clock?: Clock;
  /**
   * How often (ms) one unref'd timer drops expired keys: 0 (off) to 2^31 − 1. Default 10,000.
   * Correctness never depends on it: expiry is judged from the state's timestamps. Pass 0 for a
   * limiter created at a Cloudflare Worker's global scope, where timers are refused.
   */
  pruneIntervalMs?: number;
}

/** A limiter on this process's memory, with the synchronous entry points. */
export interface MemoryLimiter extends SyncLimiter {
  /** Keys held now. */
  readonly size: number;
  /** Bytes of state held now (see {@link MemoryLimiterOptions.maxBytes}); never above `maxBytes`. */
  readonly bytes: number;
  /** Drops every key whose state is fresh again; returns how many. */
  prune(): number;
}

const MEMORY_LIMITER_OPTION_NAMES: OptionNames<MemoryLimiterOptions> = {
  algorithm: true,
  maxKeys: true,
  maxBytes: true,
  clock: true,
  pruneIntervalMs: true,
};

/**
 * A limiter whose state lives in this process: exact for one process, and `N ×` the limit
 * across N processes (use `sluice/redis` for a fleet). Its memory is bounded by `maxKeys` and
 * `maxBytes`, whatever the keys and the algorithm.
 *
 * Calls throw (or reject with) {@link ClockError} for a clock reading they cannot use; the
 * reading is never written into state.
 *
 * @throws {ConfigError} on invalid options, naming the option: options not an object, an
 * `algorithm` that is not one, `maxKeys` not an integer ≥ 1, `pruneIntervalMs` not an integer in
 * 0..2^31 − 1, `clock` not a function. `null` is not a default.
 * @example
 * ```ts
 * import { createMemoryLimiter, gcra } from 'sluice';
 *
 * const limiter = createMemoryLimiter({ algorithm: gcra({ limit: 100, periodMs: 60_000 }), maxKeys: 50_000 });
 * // Local decisions need no Promise: limitSync is limit without the await.
 * const decision = limiter.limitSync('ip:203.0.113.7');
 * if (!decision.allowed) console.log(`retry in ${decision.retryAfterMs} ms`);
 * ```
 */
export function createMemoryLimiter(options: MemoryLimiterOptions): MemoryLimiter {
  requireOptions('createMemoryLimiter options', options, MEMORY_LIMITER_OPTION_NAMES);
  const algorithm = requireAlgorithm('algorithm', options.algorithm);
  const maxKeys = requireInteger('maxKeys', orDefault(options.maxKeys, 100_000));
  const pruneIntervalMs = requireDurationMs('pruneIntervalMs', orDefault(options.pruneIntervalMs, 10_000), 0);
  const clock = requireFunction('clock', orDefault(options.clock, monotonicClock));
  const { growth } = algorithm;
  // A growing state lives in an array of its own per key; a fixed one in the table's shared array.
  const width = growth ? 0 : algorithm.slots;
  const maxOwnBytes = growth ? 8 * algorithm.slots : 0;
  const maxBytes = requireInteger(
    'maxBytes',
    orDefault(options.maxBytes, Math.max(DEFAULT_MAX_BYTES, maxKeys * slotBytes(width))),
    slotBytes(width) + maxOwnBytes,
  );
  const freshness = freshnessOf(algorithm);
  const table = createSlotTable({ width, maxKeys, maxBytes, maxOwnBytes, freshAtMs: freshness.freshAtMs });
  // The algorithm of a call's params; seen by the table's expiry, so no key is dropped early.
  const resolve = (options: ParamsOptions | undefined): Algorithm =>
    options?.params === undefined ? algorithm : freshness.seen(algorithmFor(algorithm, options.params));
  // Decides for keys not in the table, so a denied stranger never takes a slot.
  const scratch = new Float64Array(growth ? growth.freshSize : width);
  const stateOf = (slot: number): Float64Array => (growth ? (table.own(slot) as Float64Array) : table.state());
  const offsetOf = (slot: number): number => slot * width;

  // Decides `cost` for `key` under `core` at `nowMs`; `slot` is its slot, -1 for a stranger
  // (already checked).
  const decideAt = growth
    ? (key: string, slot: number, cost: number, nowMs: number, core: Algorithm): Decision =>
        decideGrowing(core, core.growth ?? growth, table, scratch, key, slot, cost, nowMs)
    : (key: string, slot: number, cost: number, nowMs: number, core: Algorithm): Decision => {
        if (slot !== -1) return core.decide(table.state(), slot * width, nowMs, cost, true);
        scratch.fill(0);
        const decision = core.decide(scratch, 0, nowMs, cost, true);
        if (decision.allowed && cost > 0) {
          const inserted = table.insert(key, nowMs); // may grow the table, replacing `table.state()`
          table.state().set(scratch, inserted * width);
        }
        return decision;
      };
  // A key the table holds was checked when it went in, so only a stranger is checked: one
  // Map lookup, no scan of the key, on the path a busy key takes.
  const decide = (key: string, cost: number, core: Algorithm): Decision => {
    const slot = table.find(key);
    if (slot === -1) checkKey(key);
    return decideAt(key, slot, cost, readClock(clock), core);
  };
  // What `cost` would do now under `core`, applying nothing: peeks, partial admission's first
  // look, and what a blocked request would meet.
  const reportAt = (key: string, cost: number, nowMs: number, core: Algorithm): Decision => {
    const slot = table.find(key);
    if (slot === -1) scratch.fill(0);
    return core.decide(slot === -1 ? scratch : stateOf(slot), slot === -1 ? 0 : offsetOf(slot), nowMs, cost, false);
  };
  const decidePartially = (key: string, cost: number, core: Algorithm): Decision => {
    checkKey(key);
    const nowMs = readClock(clock);
    return admitPartially(cost, (units, commit) =>
      commit ? decideAt(key, table.find(key), units, nowMs, core) : reportAt(key, units, nowMs, core),
    );
  };
  const blocks = createBlockTable(maxKeys);
  const invalidations = createLocalInvalidations();
  // One size check per decision while no key is blocked. A blocked partial request waits as a
  // denied one does, for one unit.
  const blockedSync = (key: string, cost: number, core: Algorithm, partial: boolean): Decision | undefined => {
    if (blocks.size() === 0) return undefined;
    const nowMs = readClock(clock);
    const leftMs = blocks.leftMs(key, nowMs);
    if (leftMs === 0) return undefined;
    checkKey(key);
    return blockedDecision(reportAt(key, partial ? Math.min(cost, 1) : cost, nowMs, core), leftMs, partial);
  };
  const limitWithOptions = (key: string, limitOptions: LimitOptions | undefined): Decision => {
    if (limitOptions === undefined) return blockedSync(key, 1, algorithm, false) ?? decide(key, 1, algorithm);
    const cost = costOf(limitOptions);
    const core = limitOptions?.params === undefined ? algorithm : resolve(limitOptions);
    const partial = partialOf(limitOptions);
    return (
      blockedSync(key, cost, core, partial) ?? (partial ? decidePartially(key, cost, core) : decide(key, cost, core))
    );
  };
  // The common call (no options, no key blocked) in a few bytes: V8 inlines limitSync into its
  // caller within a budget of bytecode, which options, blocks and partial admission would spend.
  const limitSync = (key: string, limitOptions?: LimitOptions): Decision =>
    limitOptions === undefined && blocks.size() === 0 ? decide(key, 1, algorithm) : limitWithOptions(key, limitOptions);
  const peekSync = (key: string, peekOptions?: ParamsOptions): Decision => {
    checkKey(key);
    const core = resolve(peekOptions);
    const nowMs = readClock(clock);
    const held = reportAt(key, 0, nowMs, core);
    const next = reportAt(key, 1, nowMs, core);
    const leftMs = blocks.leftMs(key, nowMs);
    if (leftMs === 0) return peekDecision(held, next);
    // Blocked, the key holds nothing for a request until the block ends, as the Redis script says.
    return peekDecision(blockedDecision(held, leftMs), blockedDecision(next, leftMs));
  };
  const resetSync = (key: string): void => {
    checkKey(key);
    table.delete(key);
    blocks.delete(key);
    invalidations.emit(key, 'reset');
  };
  const refund = algorithm.refund;
  const refundSync = (key: string, units: number, refundOptions?: ParamsOptions): void => {
    checkKey(key);
    costOf({ cost: units });
    const core = resolve(refundOptions);
    const nowMs = readClock(clock);
    const slot = table.find(key);
    if (slot !== -1 && units > 0) core.refund?.(stateOf(slot), offsetOf(slot), nowMs, units);
  };
  // The slot of `key` with room for `units` more, inserted if new: a charge or a penalty spends
  // without an admission, so it may be the first write of a key.
  const slotWithRoom = growth
    ? (key: string, units: number, nowMs: number): number =>
        withRoom(algorithm, growth, table, scratch, key, table.find(key), units, nowMs)
    : (key: string, _units: number, nowMs: number): number => {
        const slot = table.find(key);
        if (slot !== -1) return slot;
        const inserted = table.insert(key, nowMs);
        table.state().fill(0, offsetOf(inserted), offsetOf(inserted) + width);
        return inserted;
      };
  // Only fixed-size states take a charge (the algorithms with a refund).
  const charge = growth ? undefined : algorithm.charge;
  const chargeSync = (key: string, units: number, chargeOptions?: ParamsOptions): void => {
    checkKey(key);
    costOf({ cost: units });
    const core = resolve(chargeOptions);
    const nowMs = readClock(clock);
    if (charge === undefined || units === 0) return;
    const slot = slotWithRoom(key, units, nowMs);
    core.charge?.(table.state(), offsetOf(slot), nowMs, units);
  };
  const penalize = algorithm.charge ?? algorithm.penalty;
  const reward = refund ?? algorithm.reward;
  const admin = {
    block(key: string, durationMs: number): void {
      checkKey(key);
      const ms = blockMsOf(durationMs);
      const nowMs = readClock(clock);
      if (ms > 0) blocks.extend(key, nowMs + ms, nowMs);
      invalidations.emit(key, 'block');
    },
    unblock(key: string): void {
      checkKey(key);
      blocks.delete(key);
      invalidations.emit(key, 'unblock');
    },
    penalty(key: string, units: number): void {
      checkKey(key);
      costOf({ cost: units });
      if (penalize === undefined) throw unsupported('penalty', algorithm.name);
      const nowMs = readClock(clock);
      if (units === 0) return;
      const slot = slotWithRoom(key, units, nowMs);
      penalize(stateOf(slot), offsetOf(slot), nowMs, units);
    },
    reward(key: string, units: number): void {
      checkKey(key);
      costOf({ cost: units });
      if (reward === undefined) throw unsupported('reward', algorithm.name);
      const nowMs = readClock(clock);
      const slot = table.find(key);
      if (slot !== -1 && units > 0) reward(stateOf(slot), offsetOf(slot), nowMs, units);
      invalidations.emit(key, 'reward');
    },
    invalidate(key: string): void {
      checkKey(key);
      invalidations.emit(key, 'invalidate');
    },
  };

  let timer: ReturnType<typeof setInterval> | undefined;
  if (pruneIntervalMs > 0) {
    // A bad reading skips this round: pruning at +Infinity would drop every key.
    timer = setInterval(() => {
      try {
        table.prune(readClock(clock));
      } catch (error) {
        if (!(error instanceof ClockError)) throw error;
      }
    }, pruneIntervalMs);
    timer.unref();
  }

  const limiter: Omit<MemoryLimiter, 'size' | 'bytes'> = {
    algorithm,
    limitSync,
    peekSync,
    resetSync,
    // Async functions: a throw becomes a rejection with no closure or try block per call.
    limit: async (key, limitOptions) => limitSync(key, limitOptions),
    peek: async (key, peekOptions) => peekSync(key, peekOptions),
    reset: async (key) => resetSync(key),
    ...(refund && {
      refund: async (key: string, units: number, refundOptions?: ParamsOptions) =>
        refundSync(key, units, refundOptions),
    }),
    algorithmFor: (params) => algorithmFor(algorithm, params),
    ...(charge && {
      charge: async (key: string, units: number, chargeOptions?: ParamsOptions) =>
        chargeSync(key, units, chargeOptions),
    }),
    block: async (key, durationMs) => admin.block(key, durationMs),
    unblock: async (key) => admin.unblock(key),
    penalty: async (key, units) => admin.penalty(key, units),
    reward: async (key, units) => admin.reward(key, units),
    invalidate: async (key) => admin.invalidate(key),
    invalidations,
    prune: () => {
      const nowMs = readClock(clock);
      blocks.prune(nowMs);
      return table.prune(nowMs);
    },
    close() {
      clearInterval(timer);
      return Promise.resolve();
    },
  };
  // Defined after the literal: a getter inside it would put the limiter in V8's dictionary mode,
  // where every `limiter.limitSync` a caller makes is a hash lookup.
  return Object.defineProperties(limiter, {
    size: { get: table.size, enumerable: true, configurable: true },
    bytes: { get: table.bytes, enumerable: true, configurable: true },
  }) as MemoryLimiter;
}

/**
 * Decides for a key whose state grows with what it holds (the sliding-window log). Its array
 * grows (by doubling, up to `algorithm.slots`) only for a request it admits; a denial, like a
 * stranger's, changes nothing.
 */
function decideGrowing(
  algorithm: Algorithm,
  growth: StateGrowth,
  table: SlotTable,
  fresh: Float64Array,
  key: string,
  slot: number,
  cost: number,
  nowMs: number,
): Decision {
  const state = slot === -1 ? fresh : (table.own(slot) as Float64Array);
  if (slot !== -1 && growth.sizeFor(state, 0, nowMs, cost) <= state.length) {
    return algorithm.decide(state, 0, nowMs, cost, true);
  }
  const decision = algorithm.decide(state, 0, nowMs, cost, false);
  if (!decision.allowed || cost === 0) return decision;
  const owner = withRoom(algorithm, growth, table, fresh, key, slot, cost, nowMs);
  return algorithm.decide(table.own(owner) as Float64Array, 0, nowMs, cost, true);
}

/**
 * The slot of a growing state (`slot`, or a new one for a stranger, -1, whose state is `fresh`)
 * whose array has room for `units` more at `nowMs`, grown by doubling up to `algorithm.slots`.
 */
function withRoom(
  algorithm: Algorithm,
  growth: StateGrowth,
  table: SlotTable,
  fresh: Float64Array,
  key: string,
  slot: number,
  units: number,
  nowMs: number,
): number {
  const state = slot === -1 ? fresh : (table.own(slot) as Float64Array);
  const size = growth.sizeFor(state, 0, nowMs, units);
  if (slot !== -1 && size <= state.length) return slot;
  const grown = growth.resize(state, 0, Math.min(algorithm.slots, Math.max(size, 2 * state.length)));
  const owner = slot === -1 ? table.insert(key, nowMs) : slot;
  table.setOwn(owner, grown, nowMs);
  return owner;
}

const DEFAULT_MAX_BYTES = 64 * 1024 * 1024;

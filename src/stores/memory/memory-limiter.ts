import type { Algorithm } from '../../algorithms/types.js';
import { type Decision, type LimitOptions, peekDecision } from '../../decision.js';
import { type Clock, monotonicClock, type SyncLimiter } from '../../limiter.js';
import { checkKey, costOf, requireInteger } from '../../validate.js';
import { createSlotTable } from './slot-table.js';

/** Options of {@link createMemoryLimiter}. */
export interface MemoryLimiterOptions {
  /** The algorithm core, e.g. `gcra({ limit: 100, periodMs: 60_000 })`. */
  algorithm: Algorithm;
  /**
   * Most keys held at once (keys are often attacker-controlled, so the store is bounded).
   * When full, expired state goes first, then the least recently used key, whose next
   * request then starts fresh. Default 100,000.
   */
  maxKeys?: number;
  /** Milliseconds clock; default monotonic `performance.now()`. Read once per call. */
  clock?: Clock;
  /**
   * How often (ms) one unref'd timer drops expired keys; 0 turns it off. Default 10,000.
   * Correctness never depends on it: expiry is judged from the state's timestamps. Pass 0 for a
   * limiter created at a Cloudflare Worker's global scope, where timers are refused.
   */
  pruneIntervalMs?: number;
}

/** A limiter on this process's memory, with the synchronous entry points. */
export interface MemoryLimiter extends SyncLimiter {
  /** Keys held now. */
  readonly size: number;
  /** Drops every key whose state is fresh again; returns how many. */
  prune(): number;
}

/**
 * A limiter whose state lives in this process: exact for one process, and `N ×` the limit
 * across N processes (use `sluice/redis` for a fleet).
 *
 * @throws {ConfigError} on invalid options.
 */
export function createMemoryLimiter(options: MemoryLimiterOptions): MemoryLimiter {
  const { algorithm } = options;
  const maxKeys = requireInteger('maxKeys', options.maxKeys ?? 100_000);
  const pruneIntervalMs = requireInteger('pruneIntervalMs', options.pruneIntervalMs ?? 10_000, 0);
  const clock = options.clock ?? monotonicClock;
  const width = algorithm.slots;
  const table = createSlotTable(width, maxKeys, algorithm.freshAtMs);
  // Decides for keys not in the table, so a denied stranger never takes a slot.
  const scratch = new Float64Array(width);

  const decide = (key: string, cost: number): Decision => {
    checkKey(key);
    const nowMs = Math.floor(clock());
    const slot = table.find(key);
    if (slot !== -1) return algorithm.decide(table.state, slot * width, nowMs, cost, true);
    scratch.fill(0);
    const decision = algorithm.decide(scratch, 0, nowMs, cost, true);
    if (decision.allowed && cost > 0) {
      const inserted = table.insert(key, nowMs); // may grow the table, replacing `table.state`
      table.state.set(scratch, inserted * width);
    }
    return decision;
  };
  const limitSync = (key: string, limitOptions?: LimitOptions): Decision => decide(key, costOf(limitOptions));
  const peekSync = (key: string): Decision => {
    checkKey(key);
    const nowMs = Math.floor(clock());
    const slot = table.find(key);
    if (slot === -1) scratch.fill(0);
    const state = slot === -1 ? scratch : table.state;
    const offset = slot === -1 ? 0 : slot * width;
    return peekDecision(
      algorithm.decide(state, offset, nowMs, 0, false),
      algorithm.decide(state, offset, nowMs, 1, false),
    );
  };
  const resetSync = (key: string): void => {
    checkKey(key);
    table.delete(key);
  };
  const refund = algorithm.refund;
  const refundSync = (key: string, units: number): void => {
    checkKey(key);
    costOf({ cost: units });
    const slot = table.find(key);
    if (slot !== -1 && units > 0) refund?.(table.state, slot * width, Math.floor(clock()), units);
  };

  let timer: ReturnType<typeof setInterval> | undefined;
  if (pruneIntervalMs > 0) {
    timer = setInterval(() => table.prune(Math.floor(clock())), pruneIntervalMs);
    timer.unref();
  }

  return {
    algorithm,
    get size() {
      return table.size;
    },
    limitSync,
    peekSync,
    resetSync,
    limit: (key, limitOptions) => settle(() => limitSync(key, limitOptions)),
    peek: (key) => settle(() => peekSync(key)),
    reset: (key) => settle(() => resetSync(key)),
    ...(refund && { refund: (key: string, units: number) => settle(() => refundSync(key, units)) }),
    prune: () => table.prune(Math.floor(clock())),
    close() {
      clearInterval(timer);
      return Promise.resolve();
    },
  };
}

/** Runs a synchronous decision as a Promise, turning a throw into a rejection. */
function settle<T>(run: () => T): Promise<T> {
  try {
    return Promise.resolve(run());
  } catch (error) {
    return Promise.reject(error);
  }
}

import type { AlgorithmParams } from '../algorithms/types.js';
import type { KeyState } from './key-state.js';
import type { KeyTable } from './key-table.js';
import { expire } from './local-decision.js';
import type { LeaseCounters } from './stats.js';

/** Lease return: unspent units go back to the remote instead of rotting locally. */
export interface Returns {
  /**
   * Takes `state`'s unexpired units off the key and refunds them under the numbers of its lane;
   * resolves to the units the remote took back. Units that cannot go back (a remote without
   * refunds, a failed refund, counted in `returnErrors`) are counted as dropped.
   */
  takeBack(key: string, state: KeyState): Promise<number>;
  /**
   * Refunds the latest `units` of the key's held units (the adaptive trim): a refund moves the
   * remote's schedule back from its end, so the units kept are the earlier slots. Call it only
   * for a remote that takes refunds.
   */
  trim(key: string, state: KeyState, units: number): Promise<number>;
  /** Returns the units of every key idle for `returnIdleMs` and forgets those keys. */
  returnIdle(): Promise<number>;
  /** Returns the units of every key without a lease in flight (for `close()`). */
  returnAll(): Promise<number>;
}

interface ReturnsContext {
  /** The remote's refund, with the params of the lane whose units go back; undefined without one. */
  refund: ((key: string, units: number, params: AlgorithmParams | undefined) => Promise<void>) | undefined;
  table: KeyTable;
  counters: LeaseCounters;
  returnIdleMs: number;
  nowMs(): number;
}

export function createReturns(context: ReturnsContext): Returns {
  const { refund, table, counters } = context;

  // Units come off the key before the call, so no request can spend what is on its way back.
  const giveBack = async (key: string, state: KeyState, units: number): Promise<number> => {
    if (units === 0) return 0;
    if (refund === undefined) {
      counters.droppedUnits += units;
      return 0;
    }
    counters.returns++;
    try {
      await refund(key, units, state.lane.params);
    } catch {
      counters.returnErrors++;
      counters.droppedUnits += units;
      return 0;
    }
    counters.returnedUnits += units;
    return units;
  };

  const takeBack = (key: string, state: KeyState): Promise<number> => {
    expire(state, context.nowMs(), state.lane.model, counters);
    const units = state.units;
    state.units = 0;
    return giveBack(key, state, units);
  };

  const settle = async (returning: Promise<number>[]): Promise<number> =>
    (await Promise.all(returning)).reduce((sum, units) => sum + units, 0);

  return {
    takeBack,
    trim(key, state, units) {
      state.units -= units;
      state.endMs -= units * state.lane.model.intervalMs;
      return giveBack(key, state, units);
    },
    returnIdle() {
      if (context.returnIdleMs === 0) return Promise.resolve(0);
      const cutoffMs = context.nowMs() - context.returnIdleMs;
      const returning: Promise<number>[] = [];
      for (const [key, state] of table.entries()) {
        // Entries are in `movedAtMs` order and a key is used no earlier than it moved.
        if (state.movedAtMs > cutoffMs) break;
        if (state.usedAtMs > cutoffMs || state.queue !== undefined) continue;
        returning.push(takeBack(key, state));
        table.delete(key);
      }
      return settle(returning);
    },
    returnAll() {
      const returning: Promise<number>[] = [];
      for (const [key, state] of table.entries()) {
        if (state.queue === undefined && refund !== undefined) returning.push(takeBack(key, state));
      }
      return settle(returning);
    },
  };
}

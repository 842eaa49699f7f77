import type { KeyState } from './key-state.js';
import type { KeyTable } from './key-table.js';
import type { LeaseCounters } from './stats.js';

/** Lease return: unspent units go back to the remote instead of rotting locally. */
export interface Returns {
  /**
   * Takes `state`'s unexpired units off the key and refunds them; resolves to the units the
   * remote took back (0 on failure, counted in `returnErrors`: those units are stranded).
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
  refund: ((key: string, units: number) => Promise<void>) | undefined;
  table: KeyTable;
  counters: LeaseCounters;
  returnIdleMs: number;
  /** T, ms. */
  intervalMs: number;
  nowMs(): number;
  /** Drops `state`'s expired units at `nowMs` (and counts them). */
  expire(state: KeyState, nowMs: number): void;
}

export function createReturns(context: ReturnsContext): Returns {
  const { refund, table, counters } = context;

  // Units come off the key before the call, so no request can spend what is on its way back.
  const giveBack = async (key: string, units: number): Promise<number> => {
    if (refund === undefined || units === 0) return 0;
    counters.returns++;
    try {
      await refund(key, units);
    } catch {
      counters.returnErrors++;
      return 0;
    }
    counters.returnedUnits += units;
    return units;
  };

  const takeBack = (key: string, state: KeyState): Promise<number> => {
    if (refund === undefined) return Promise.resolve(0);
    context.expire(state, context.nowMs());
    const units = state.units;
    state.units = 0;
    return giveBack(key, units);
  };

  const settle = async (returning: Promise<number>[]): Promise<number> =>
    (await Promise.all(returning)).reduce((sum, units) => sum + units, 0);

  return {
    takeBack,
    trim(key, state, units) {
      state.units -= units;
      state.endMs -= units * context.intervalMs;
      return giveBack(key, units);
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
        if (state.queue === undefined) returning.push(takeBack(key, state));
      }
      return settle(returning);
    },
  };
}

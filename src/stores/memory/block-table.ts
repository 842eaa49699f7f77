/**
 * The blocks of a memory limiter: key → the end of its block (ms on the limiter's clock), at
 * most `maxKeys` of them. Blocks are set by the application, not by traffic, so when full the
 * oldest block set goes first, after the expired ones.
 */
export interface BlockTable {
  /** Blocks held now. A method, not a getter: every decision asks, and V8 does not inline an object literal's getters. */
  size(): number;
  /** Milliseconds `key`'s block has left at `nowMs`; 0 (and the block dropped) when none runs. */
  leftMs(key: string, nowMs: number): number;
  /** Blocks `key` until `untilMs`, unless a block running longer is already set; `nowMs` drops the blocks over when full. */
  extend(key: string, untilMs: number, nowMs: number): void;
  delete(key: string): void;
  /** Drops every block over at `nowMs`. */
  prune(nowMs: number): void;
}

export function createBlockTable(maxKeys: number): BlockTable {
  const ends = new Map<string, number>();
  const prune = (nowMs: number) => {
    for (const [key, endMs] of ends) if (endMs <= nowMs) ends.delete(key);
  };
  return {
    size: () => ends.size,
    leftMs(key, nowMs) {
      const endMs = ends.get(key);
      if (endMs === undefined) return 0;
      if (endMs > nowMs) return endMs - nowMs;
      ends.delete(key);
      return 0;
    },
    extend(key, untilMs, nowMs) {
      const endMs = ends.get(key);
      if (endMs !== undefined && endMs >= untilMs) return;
      ends.delete(key); // re-inserted last: the most recently set goes last when full
      if (ends.size >= maxKeys) prune(nowMs);
      if (ends.size >= maxKeys) ends.delete(ends.keys().next().value as string);
      ends.set(key, untilMs);
    },
    delete: (key) => void ends.delete(key),
    prune,
  };
}

import type { KeyState } from './key-state.js';

/**
 * The bounded key → {@link KeyState} map of a leased limiter. Keys are often attacker-chosen,
 * so it holds at most `maxKeys`; no timer per key.
 *
 * The Map's insertion order doubles as a recency list: a key moves to the recent end when it is
 * used and its last move is at least {@link MOVE_AFTER_MS} old, so a hot key costs one Map
 * delete + set per second, not per request. Entries are therefore ordered by `movedAtMs`, and
 * since `usedAtMs ≥ movedAtMs`, an idle sweep can stop at the first entry moved after its
 * cut-off.
 */
export interface KeyTable {
  /** A method, not a getter: a getter in an object literal puts the table in V8's dictionary mode. */
  size(): number;
  get(key: string): KeyState | undefined;
  /** Marks `state` used at `nowMs`, moving it to the recent end when due. */
  touch(key: string, state: KeyState, nowMs: number): void;
  /** Adds a key not in the table, evicting one first when full. */
  add(key: string, state: KeyState): void;
  delete(key: string): void;
  /** Entries from least to most recently moved. Deleting the current entry while iterating is safe. */
  entries(): IterableIterator<[string, KeyState]>;
}

/** Granularity of the recency order, in the limiter's clock ms. */
export const MOVE_AFTER_MS = 1000;
/** How many of the oldest entries eviction looks at for one that holds no quota. */
const EVICTION_SCAN = 16;

/**
 * @param maxKeys the most keys held at once
 * @param holdsQuota whether evicting the state would strand leased units
 * @param evicted called with each evicted key, so its units can be returned
 */
export function createKeyTable(
  maxKeys: number,
  holdsQuota: (state: KeyState) => boolean,
  evicted: (key: string, state: KeyState) => void,
): KeyTable {
  const map = new Map<string, KeyState>();

  // Prefer a key that holds no quota and waits on nothing (its state is only a cache), then any
  // key without a lease in flight, among the oldest few.
  const victim = (): string | undefined => {
    let fallback: string | undefined;
    let scanned = 0;
    for (const [key, state] of map) {
      if (state.queue === undefined) {
        if (!holdsQuota(state)) return key;
        fallback ??= key;
      }
      if (++scanned === EVICTION_SCAN) break;
    }
    return fallback ?? map.keys().next().value;
  };

  return {
    size: () => map.size,
    get: (key) => map.get(key),
    touch(key, state, nowMs) {
      state.usedAtMs = nowMs;
      if (nowMs - state.movedAtMs < MOVE_AFTER_MS) return;
      state.movedAtMs = nowMs;
      map.delete(key);
      map.set(key, state);
    },
    add(key, state) {
      if (map.size >= maxKeys) {
        const old = victim();
        if (old !== undefined) {
          const oldState = map.get(old) as KeyState;
          map.delete(old);
          evicted(old, oldState);
        }
      }
      map.set(key, state);
    },
    delete(key) {
      map.delete(key);
    },
    entries: () => map.entries(),
  };
}

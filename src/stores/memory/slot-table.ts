/**
 * A bounded key → state table laid out for speed and small size: one `Map<string, slot>`, the
 * state of every key in one `Float64Array` (`width` numbers per slot), and one recency byte per
 * slot. No per-key objects, no timers.
 * A state that grows with what its key holds (the sliding-window log) is instead one
 * `Float64Array` per key (`width` 0), sized by the caller through {@link SlotTable.setOwn}.
 *
 * Bounded twice: at most `maxKeys` keys, and at most `maxBytes` bytes of typed arrays. Slots
 * grow by doubling within both. When either bound would be passed, expired state goes first
 * (a key whose state is fresh again holds no information), then a key not used since the clock
 * hand last passed it (CLOCK, the second-chance approximation of least recently used).
 *
 * CLOCK, not an exact recency list: a lookup then writes one byte instead of relinking a list,
 * whose links cost 8 bytes a key and, over many keys, cache misses at both neighbours.
 */
export interface SlotTable {
  /** Keys held now. */
  readonly size: number;
  /** Bytes of typed arrays held now: slots reserved plus states of their own; at most `maxBytes`. */
  readonly bytes: number;
  /**
   * The shared state array; slot s starts at `s * width`. Replaced when the table grows. A
   * method, not a getter: V8 does not inline an object literal's getters, and every decision reads it.
   */
  state(): Float64Array;
  /** The slot of `key`, marked used, or −1. */
  find(key: string): number;
  /** A slot for a key not in the table, evicting if full; its state is the caller's to write. */
  insert(key: string, nowMs: number): number;
  /** The state of its own of slot `s` (`width` 0), or undefined before {@link setOwn}. */
  own(s: number): Float64Array | undefined;
  /** Gives slot `s` the state `state`, first evicting other keys until it fits in `maxBytes`. */
  setOwn(s: number, state: Float64Array, nowMs: number): void;
  delete(key: string): boolean;
  /** Drops every expired key; returns how many. */
  prune(nowMs: number): number;
}

export interface SlotTableOptions {
  /** Float64 numbers of state per slot in the shared array; 0 when every key has a state of its own. */
  width: number;
  maxKeys: number;
  maxBytes: number;
  /** The most bytes one key's own state can take (0 with a shared array): kept free of slots. */
  maxOwnBytes: number;
  /** When the state at an offset is fresh again (expired). */
  freshAtMs: (state: Float64Array, offset: number) => number;
}

const EVICTION_SCAN = 16;
const INITIAL_NUMBERS = 8192;
/** One Uint8 "used since the hand passed" mark. */
const RECENCY_BYTES = 1;

/** Bytes one slot reserves in a table of `width` (its recency mark and its share of the shared array). */
export function slotBytes(width: number): number {
  return 8 * width + RECENCY_BYTES;
}

export function createSlotTable(options: SlotTableOptions): SlotTable {
  const { width, maxKeys, maxBytes, maxOwnBytes, freshAtMs } = options;
  const bytesPerSlot = slotBytes(width);
  // Slots never take the room one key's largest own state needs, so that state always fits.
  const mostSlots = Math.min(maxKeys, Math.floor((maxBytes - maxOwnBytes) / bytesPerSlot));
  const slotOf = new Map<string, number>();
  // Start small in bytes, not in keys.
  let capacity = Math.max(1, Math.min(mostSlots, Math.floor(INITIAL_NUMBERS / Math.max(1, width))));
  // Appended to in slot order, so they stay packed arrays (V8 keeps large sparse arrays as dictionaries).
  const keys: (string | undefined)[] = [];
  const owned: (Float64Array | undefined)[] = [];
  let ownedBytes = 0;
  let state = new Float64Array(capacity * width);
  // 1 when the slot's key was used since the clock hand last passed it.
  let used = new Uint8Array(capacity);
  let hand = 0;
  let handedOut = 0; // slots ever handed out; below it, free slots are on `free`
  const free: number[] = [];

  const freshAt = (s: number): number => {
    if (width > 0) return freshAtMs(state, s * width);
    const own = owned[s];
    return own === undefined ? 0 : freshAtMs(own, 0);
  };
  const remove = (s: number): void => {
    slotOf.delete(keys[s] as string);
    keys[s] = undefined;
    used[s] = 0;
    const own = owned[s];
    if (own !== undefined) {
      ownedBytes -= own.byteLength;
      owned[s] = undefined;
    }
    free.push(s);
  };
  const grow = (): void => {
    capacity = Math.min(mostSlots, capacity * 2);
    const nextState = new Float64Array(capacity * width);
    nextState.set(state);
    state = nextState;
    const nextUsed = new Uint8Array(capacity);
    nextUsed.set(used);
    used = nextUsed;
  };
  // Expired state a few slots ahead of the hand goes before a live key; else the first key the
  // hand finds unused since its last pass (marks it passes are cleared). Never `keep`, the slot
  // being decided, nor a free slot. Ends within two turns: some other key is held.
  const victim = (nowMs: number, keep: number): number => {
    for (let i = 0, s = hand; i < EVICTION_SCAN && i < handedOut; i++, s = s + 1 === handedOut ? 0 : s + 1) {
      if (s !== keep && keys[s] !== undefined && freshAt(s) <= nowMs) return s;
    }
    for (;;) {
      const s = hand;
      hand = hand + 1 === handedOut ? 0 : hand + 1;
      if (s === keep || keys[s] === undefined) continue;
      if (used[s] === 0) return s;
      used[s] = 0;
    }
  };
  const prune = (nowMs: number): number => {
    let dropped = 0;
    for (let s = 0; s < handedOut; s++) {
      if (keys[s] !== undefined && freshAt(s) <= nowMs) {
        remove(s);
        dropped++;
      }
    }
    return dropped;
  };

  return {
    get size() {
      return slotOf.size;
    },
    get bytes() {
      return capacity * bytesPerSlot + ownedBytes;
    },
    state: () => state,
    find(key) {
      const s = slotOf.get(key);
      if (s === undefined) return -1;
      // Read first: a mark already set costs no store, so its cache line stays clean.
      if (used[s] === 0) used[s] = 1;
      return s;
    },
    insert(key, nowMs) {
      if (slotOf.size >= mostSlots) remove(victim(nowMs, -1));
      else if (free.length === 0 && handedOut === capacity) grow();
      const s = free.pop() ?? handedOut++;
      keys[s] = key;
      slotOf.set(key, s);
      used[s] = 1;
      return s;
    },
    own: (s) => owned[s],
    setOwn(s, own, nowMs) {
      const growth = own.byteLength - (owned[s]?.byteLength ?? 0);
      while (capacity * bytesPerSlot + ownedBytes + growth > maxBytes) remove(victim(nowMs, s));
      ownedBytes += growth;
      owned[s] = own;
    },
    delete(key) {
      const s = slotOf.get(key);
      if (s === undefined) return false;
      remove(s);
      return true;
    },
    prune,
  };
}

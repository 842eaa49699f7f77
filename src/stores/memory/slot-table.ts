/**
 * A bounded key → state table laid out for speed and small size: one `Map<string, slot>`, the
 * state of every key in one `Float64Array` (`width` numbers per slot), and one recency byte per
 * slot. No per-key objects, no timers.
 * A state that grows with what its key holds (the sliding-window log) is instead one
 * `Float64Array` per key (`width` 0), sized by the caller through {@link SlotTable.setOwn}.
 *
 * Bounded twice: at most `maxKeys` keys, and at most `maxBytes` bytes of typed arrays. Slots
 * grow by doubling within both. When either bound would be passed, expired state a few keys
 * ahead of a hand going round the keys in insertion order goes first (a key whose state is fresh
 * again holds no information); else the first key the hand finds not used since it went in or
 * the hand last passed it (the hand clears the marks it passes). This is SIEVE (Zhang et al.,
 * "SIEVE is Simpler than LRU", NSDI 2024): CLOCK whose new keys join unmarked, so a flood of
 * keys seen once goes before a key seen twice.
 *
 * A hand and a mark, not an exact recency list: a lookup then writes one byte instead of
 * relinking a list, whose links cost 8 bytes a key and, over many keys, cache misses at both
 * neighbours. The hand walks the Map itself, so no slot → key array is needed either.
 */
export interface SlotTable {
  /**
   * Keys held now. Methods, not getters: a getter in an object literal puts the object in V8's
   * dictionary mode, where every decision's `find` and `state` would be a hash lookup.
   */
  size(): number;
  /** Bytes of typed arrays held now: slots reserved plus states of their own; at most `maxBytes`. */
  bytes(): number;
  /** The shared state array; slot s starts at `s * width`. Replaced when the table grows. */
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
  // The hand: an iterator over the Map, restarted at its end. Dropped by a prune that drops keys:
  // an idle iterator would hold the tables the Map has since shrunk from (V8 chains them for it).
  // A Map iterator visits keys set after it was made, so a new key is met at the end of the turn.
  let hand: ReturnType<typeof slotOf.entries> | undefined;
  // Keys read from the hand but not passed yet: looked through for expired state.
  const ahead: [string, number][] = [];
  // Start small in bytes, not in keys.
  let capacity = Math.max(1, Math.min(mostSlots, Math.floor(INITIAL_NUMBERS / Math.max(1, width))));
  // Appended to in slot order, so it stays a packed array (V8 keeps large sparse arrays as dictionaries).
  const owned: (Float64Array | undefined)[] = [];
  let ownedBytes = 0;
  let state = new Float64Array(capacity * width);
  // 1 when the slot's key was used since it went in or the hand last passed it.
  let used = new Uint8Array(capacity);
  let handedOut = 0; // slots ever handed out; below it, free slots are on `free`
  const free: number[] = [];

  const freshAt = (s: number): number => {
    if (width > 0) return freshAtMs(state, s * width);
    const own = owned[s];
    return own === undefined ? 0 : freshAtMs(own, 0);
  };
  const remove = (key: string, s: number): void => {
    slotOf.delete(key);
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
  // The key and slot under the hand, which then moves on, wrapping at the end of the Map.
  const advance = (): [string, number] => {
    const next = hand?.next();
    if (next !== undefined && next.done !== true) return next.value;
    hand = slotOf.entries();
    return hand.next().value as [string, number];
  };
  // A key read from the Map may have gone since (and its slot been reused): then it is skipped.
  const held = ([key, s]: [string, number]): boolean => slotOf.get(key) === s;
  // Expired state among the next few keys ahead of the hand goes before a live key; else the
  // first key the hand finds unmarked (it clears the marks it passes). Never `keep`, the slot being
  // decided. Ends within two turns: some other key is held.
  const victim = (nowMs: number, keep: number): [string, number] => {
    while (ahead.length < Math.min(EVICTION_SCAN, slotOf.size)) ahead.push(advance());
    const expired = ahead.findIndex((entry) => entry[1] !== keep && held(entry) && freshAt(entry[1]) <= nowMs);
    if (expired !== -1) return ahead.splice(expired, 1)[0] as [string, number];
    for (;;) {
      const entry = ahead.shift() ?? advance();
      const s = entry[1];
      if (s === keep || !held(entry)) continue;
      if (used[s] === 0) return entry;
      used[s] = 0;
    }
  };
  const evict = (nowMs: number, keep: number): void => {
    const [key, s] = victim(nowMs, keep);
    remove(key, s);
  };
  const prune = (nowMs: number): number => {
    let dropped = 0;
    for (const [key, s] of slotOf) {
      if (freshAt(s) <= nowMs) {
        remove(key, s);
        dropped++;
      }
    }
    if (dropped > 0) {
      hand = undefined;
      ahead.length = 0;
    }
    return dropped;
  };

  return {
    size: () => slotOf.size,
    bytes: () => capacity * bytesPerSlot + ownedBytes,
    state: () => state,
    find(key) {
      const s = slotOf.get(key);
      if (s === undefined) return -1;
      // Read first: a mark already set costs no store, so its cache line stays clean.
      if (used[s] === 0) used[s] = 1;
      return s;
    },
    insert(key, nowMs) {
      if (slotOf.size >= mostSlots) evict(nowMs, -1);
      else if (free.length === 0 && handedOut === capacity) grow();
      const s = free.pop() ?? handedOut++;
      slotOf.set(key, s);
      used[s] = 0;
      return s;
    },
    own: (s) => owned[s],
    setOwn(s, own, nowMs) {
      const growth = own.byteLength - (owned[s]?.byteLength ?? 0);
      while (capacity * bytesPerSlot + ownedBytes + growth > maxBytes) evict(nowMs, s);
      ownedBytes += growth;
      owned[s] = own;
    },
    delete(key) {
      const s = slotOf.get(key);
      if (s === undefined) return false;
      remove(key, s);
      return true;
    },
    prune,
  };
}

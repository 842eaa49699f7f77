/**
 * A bounded key → state table laid out for speed and small size, after lru-cache: one
 * `Map<string, slot>`, the state of every key in one `Float64Array` (`width` numbers per slot),
 * and the recency list as two `Uint32Array`s of slot links. No per-key objects, no timers.
 * A state that grows with what its key holds (the sliding-window log) is instead one
 * `Float64Array` per key (`width` 0), sized by the caller through {@link SlotTable.setOwn}.
 *
 * Bounded twice: at most `maxKeys` keys, and at most `maxBytes` bytes of typed arrays. Slots
 * grow by doubling within both. When either bound would be passed, expired state goes first
 * (a key whose state is fresh again holds no information), then the least recently used key.
 */
export interface SlotTable {
  /** Keys held now. */
  readonly size: number;
  /** Bytes of typed arrays held now: slots reserved plus states of their own; at most `maxBytes`. */
  readonly bytes: number;
  /** The shared state array; slot s starts at `s * width`. Replaced when the table grows. */
  readonly state: Float64Array;
  /** The slot of `key`, marked most recently used, or −1. */
  find(key: string): number;
  /** A slot for a key not in the table, evicting if full; its state is the caller's to write. */
  insert(key: string, nowMs: number): number;
  /** The state of its own of slot `s` (`width` 0), or undefined before {@link setOwn}. */
  own(s: number): Float64Array | undefined;
  /** Gives slot `s` the state `state`, first evicting other keys until it fits in `maxBytes`. */
  setOwn(s: number, state: Float64Array, nowMs: number): void;
  delete(key: string): boolean;
  /** Drops expired keys from the least recently used end; returns how many. */
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

const NONE = 0xffffffff;
const EVICTION_SCAN = 16;
const INITIAL_NUMBERS = 8192;
/** Two Uint32 recency links. */
const LINK_BYTES = 8;

/** Bytes one slot reserves in a table of `width` (its links and its share of the shared array). */
export function slotBytes(width: number): number {
  return 8 * width + LINK_BYTES;
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
  // Doubly linked recency list: head is the most recently used slot, tail the least.
  let newer = new Uint32Array(capacity);
  let older = new Uint32Array(capacity);
  let head = NONE;
  let tail = NONE;
  let used = 0; // slots ever handed out; below it, free slots are on `free`
  const free: number[] = [];

  const freshAt = (s: number): number => {
    if (width > 0) return freshAtMs(state, s * width);
    const own = owned[s];
    return own === undefined ? 0 : freshAtMs(own, 0);
  };
  const unlink = (s: number): void => {
    const n = newer[s] as number;
    const o = older[s] as number;
    if (n === NONE) head = o;
    else older[n] = o;
    if (o === NONE) tail = n;
    else newer[o] = n;
  };
  const pushHead = (s: number): void => {
    newer[s] = NONE;
    older[s] = head;
    if (head === NONE) tail = s;
    else newer[head] = s;
    head = s;
  };
  const remove = (s: number): void => {
    unlink(s);
    slotOf.delete(keys[s] as string);
    keys[s] = undefined;
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
    const nextNewer = new Uint32Array(capacity);
    nextNewer.set(newer);
    newer = nextNewer;
    const nextOlder = new Uint32Array(capacity);
    nextOlder.set(older);
    older = nextOlder;
  };
  // Expired state anywhere near the old end goes before a live key: look a few slots deep.
  // Never `keep`, the slot being decided.
  const victim = (nowMs: number, keep: number): number => {
    let s = tail;
    for (let depth = 0; depth < EVICTION_SCAN && s !== NONE; depth++, s = newer[s] as number) {
      if (s !== keep && freshAt(s) <= nowMs) return s;
    }
    return tail === keep ? (newer[tail] as number) : tail;
  };
  const prune = (nowMs: number): number => {
    let dropped = 0;
    while (tail !== NONE && freshAt(tail) <= nowMs) {
      remove(tail);
      dropped++;
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
    get state() {
      return state;
    },
    find(key) {
      const s = slotOf.get(key);
      if (s === undefined) return -1;
      if (s !== head) {
        unlink(s);
        pushHead(s);
      }
      return s;
    },
    insert(key, nowMs) {
      if (slotOf.size >= mostSlots) {
        if (prune(nowMs) === 0) remove(victim(nowMs, NONE));
      } else if (free.length === 0 && used === capacity) {
        grow();
      }
      const s = free.pop() ?? used++;
      keys[s] = key;
      slotOf.set(key, s);
      pushHead(s);
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

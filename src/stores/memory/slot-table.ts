/**
 * A bounded key → state table laid out for speed and small size, after lru-cache: one
 * `Map<string, slot>`, the state of every key in one `Float64Array` (`width` numbers per slot),
 * and the recency list as two `Uint32Array`s of slot links. No per-key objects, no timers.
 *
 * Slots grow by doubling up to `maxKeys`. When full, a new key first takes the place of
 * expired state (a key whose state is fresh again holds no information), then of the least
 * recently used key.
 */
export interface SlotTable {
  /** Keys held now. */
  readonly size: number;
  /** The state array; slot s starts at `s * width`. Replaced when the table grows. */
  readonly state: Float64Array;
  /** The slot of `key`, marked most recently used, or −1. */
  find(key: string): number;
  /** A zeroed slot for a key not in the table, evicting if full. */
  insert(key: string, nowMs: number): number;
  delete(key: string): boolean;
  /** Drops expired keys from the least recently used end; returns how many. */
  prune(nowMs: number): number;
  clear(): void;
}

const NONE = 0xffffffff;
const EVICTION_SCAN = 16;
const INITIAL_NUMBERS = 8192;

/**
 * @param width float64 numbers of state per key
 * @param maxKeys the most keys held at once
 * @param freshAtMs when the state at an offset is fresh again (expired)
 */
export function createSlotTable(
  width: number,
  maxKeys: number,
  freshAtMs: (state: Float64Array, offset: number) => number,
): SlotTable {
  const slotOf = new Map<string, number>();
  // Start small in bytes, not in keys: a sliding log's state is thousands of numbers wide.
  let capacity = Math.max(1, Math.min(maxKeys, Math.floor(INITIAL_NUMBERS / width)));
  // Appended to in slot order, so it stays a packed array (V8 keeps large sparse arrays as dictionaries).
  let keys: (string | undefined)[] = [];
  let state = new Float64Array(capacity * width);
  // Doubly linked recency list: head is the most recently used slot, tail the least.
  let newer = new Uint32Array(capacity);
  let older = new Uint32Array(capacity);
  let head = NONE;
  let tail = NONE;
  let used = 0; // slots ever handed out; below it, free slots are on `free`
  const free: number[] = [];

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
    free.push(s);
  };
  const grow = (): void => {
    capacity = Math.min(maxKeys, capacity * 2);
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
  const victim = (nowMs: number): number => {
    let s = tail;
    for (let depth = 0; depth < EVICTION_SCAN && s !== NONE; depth++, s = newer[s] as number) {
      if (freshAtMs(state, s * width) <= nowMs) return s;
    }
    return tail;
  };
  const prune = (nowMs: number): number => {
    let dropped = 0;
    while (tail !== NONE && freshAtMs(state, tail * width) <= nowMs) {
      remove(tail);
      dropped++;
    }
    return dropped;
  };

  return {
    get size() {
      return slotOf.size;
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
      if (slotOf.size >= maxKeys && prune(nowMs) === 0) remove(victim(nowMs));
      let s = free.pop();
      if (s === undefined) {
        if (used === capacity) grow();
        s = used++;
      } else {
        state.fill(0, s * width, s * width + width);
      }
      keys[s] = key;
      slotOf.set(key, s);
      pushHead(s);
      return s;
    },
    delete(key) {
      const s = slotOf.get(key);
      if (s === undefined) return false;
      remove(s);
      return true;
    },
    prune,
    clear() {
      slotOf.clear();
      keys = [];
      state.fill(0);
      free.length = 0;
      used = 0;
      head = NONE;
      tail = NONE;
    },
  };
}

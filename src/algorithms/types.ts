import type { Decision } from '../decision.js';

/** The algorithms Sluice ships; each has one pure core here and one Lua twin in `stores/redis/scripts`. */
export type AlgorithmName = 'gcra' | 'token-bucket' | 'fixed-window' | 'sliding-window-log' | 'sliding-window-counter';

/**
 * A pure state-transition core: no I/O, no clock reads. Stores own the state and the clock;
 * the core only says what a request does to it.
 *
 * State is `slots` float64 numbers per key, laid out in a caller-owned `Float64Array` at an
 * offset (so the memory store keeps every key in one typed array). All slots 0 is a fresh key.
 * Times are integer milliseconds on the store's clock.
 *
 * Contract every core meets (the conformance suite checks it):
 * - a denied request leaves the state untouched;
 * - an admitted request of cost c leaves `remaining` exactly c lower than before;
 * - `decide` with `commit = false` computes the same decision and writes nothing;
 * - the `remaining` of a cost-0 decision is exactly the most units admitted now: any cost up to
 *   it is admitted, any cost above it denied (partial admission, `algorithms/partial.ts`, relies on it).
 */
export interface Algorithm {
  readonly name: AlgorithmName;
  /** Reported as {@link Decision.limit}: the most units a key can hold. */
  readonly limit: number;
  /** The longest time (ms) a key's state can stay different from fresh after its last admitted request. */
  readonly horizonMs: number;
  /** Float64 slots of state per key; for a state that grows (see {@link Algorithm.growth}), the most it can take. */
  readonly slots: number;
  /**
   * Present when a key's state grows with what it holds (the sliding-window log), so a store
   * need not reserve `slots` for every key. Such a state is alone in its array from `offset` to
   * the array's end, which is its capacity; a fresh key is all zeros, of any size.
   */
  readonly growth?: StateGrowth;
  /** Integer parameters, in the order the algorithm's Lua script reads them from ARGV. */
  readonly scriptParams: readonly number[];
  /**
   * How spent units come back, which leasing needs to tell what the remote holds now from one
   * past reply: `'steady'`, one unit every `horizonMs / limit` from a fixed phase (GCRA, token
   * bucket); `'window'`, all at once when the window ends (fixed window); `'sliding'`, as
   * entries or weight leave the window, which one reply does not show (the sliding windows).
   */
  readonly replenish: 'steady' | 'window' | 'sliding';
  /**
   * The same algorithm holding one of `instances` (an integer ≥ 2) shares of the limit, for
   * the local fallback policy; counts round down but stay ≥ 1. See `divideAlgorithm`.
   * @throws {ConfigError} when the divided period is out of the algorithm's range.
   */
  divide(instances: number): Algorithm;
  /**
   * Decides a request of `cost` units at `nowMs` against `state[offset .. offset + slots)`,
   * writing the next state there when the request is admitted and `commit` is true.
   */
  decide(state: Float64Array, offset: number, nowMs: number, cost: number, commit: boolean): Decision;
  /** The time (ms) from which the state at `offset` is indistinguishable from a fresh key. */
  freshAtMs(state: Float64Array, offset: number): number;
  /**
   * Gives back `units` that were admitted and never used (leasing returns unspent quota): the
   * state moves back as if `units` fewer had been admitted, but never past fresh, so a refund
   * can not create quota the key did not spend. Present only on algorithms whose state is a
   * rate (GCRA, token bucket); windows and logs cannot tell which admission to undo.
   */
  refund?(state: Float64Array, offset: number, nowMs: number, units: number): void;
  /**
   * Spends `units` without the admission check, as debt: the state moves on as if `units` had
   * been admitted, even past empty, so the key's next admissions wait until it is paid back by
   * time. A reservation settled above its estimate charges the excess this way. Present on the
   * algorithms with `refund`; their stores keep the state within safe integers.
   */
  charge?(state: Float64Array, offset: number, nowMs: number, units: number): void;
  /**
   * The same algorithm with some options replaced, for one call (`limit(key, { params })`):
   * validated by the algorithm's factory, cached by value. A key's state is read under
   * whatever numbers the call brings: docs/algorithms.md ("Parameters that change on a live
   * key") says what each algorithm then does. Present on every shipped core.
   * @throws {InvalidParamsError} naming the parameter: a name this algorithm does not take
   * (another algorithm's included) or a value its factory refuses.
   */
  withParams?(params: AlgorithmParams): Algorithm;
  /**
   * An admin `reward` on an algorithm without `refund`: gives `units` back to the key's current
   * state, never past fresh. Unlike `refund` it need not undo a past admission exactly (a fixed
   * window counts it down in whatever window is open, the log drops its newest entries), so
   * leasing never returns leases with it.
   */
  reward?(state: Float64Array, offset: number, nowMs: number, units: number): void;
  /**
   * An admin `penalty` on an algorithm without `charge`: spends `units` without an admission, as
   * far as empty. A growing state (see {@link Algorithm.growth}) must first have room for
   * `growth.sizeFor(…, nowMs, units)`.
   */
  penalty?(state: Float64Array, offset: number, nowMs: number, units: number): void;
}

/**
 * One call's numbers for the limiter's algorithm, by option name (GCRA `limit`, `periodMs`,
 * `burst`; token bucket `capacity`, `rate`, `periodMs`; windows `limit`, `windowMs`). Names left
 * out keep the limiter's construction value. See {@link Algorithm.withParams}.
 */
export type AlgorithmParams = Readonly<Record<string, number | undefined>>;

/** How a state that grows with what a key holds is sized: see {@link Algorithm.growth}. */
export interface StateGrowth {
  /** The size of a fresh key's state (all zeros) before it holds anything. */
  readonly freshSize: number;
  /** The size (float64 numbers, at most `slots`) the state needs for `decide(…, nowMs, cost, true)` to write. */
  sizeFor(state: Float64Array, offset: number, nowMs: number, cost: number): number;
  /** The state at `offset` moved into a new array of `size` numbers (at least what it holds). */
  resize(state: Float64Array, offset: number, size: number): Float64Array;
}

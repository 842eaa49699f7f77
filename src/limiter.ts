import type { Algorithm, AlgorithmParams } from './algorithms/types.js';
import type { Decision, LimitOptions, ParamsOptions } from './decision.js';
import { ClockError } from './errors.js';

/**
 * What every Sluice limiter answers, whatever its algorithm or store.
 *
 * Calls reject with {@link InvalidKeyError} / {@link InvalidCostError} for bad input (nothing is
 * read or written) and, for shared stores, {@link StoreUnavailableError} when the store cannot decide.
 */
export interface Limiter {
  /** The algorithm core, with its parameters (for headers and leasing). */
  readonly algorithm: Algorithm;
  /** Spends `cost` units (default 1) of `key` if they are available; a denial spends nothing. */
  limit(key: string, options?: LimitOptions): Promise<Decision>;
  /**
   * Reports without spending: `allowed` and `retryAfterMs` answer "would a request of cost 1
   * pass now?", and `remaining` is what the key holds now.
   */
  peek(key: string, options?: ParamsOptions): Promise<Decision>;
  /** Forgets `key`, so its next request sees a fresh key. */
  reset(key: string): Promise<void>;
  /**
   * Gives back `units` of `key` that were admitted and never used: the key's state moves back as
   * if `units` fewer had been admitted, never past fresh (a key can not hold more than `limit`).
   * Leasing (`createLeasedLimiter`) returns unspent quota this way. Present only when the
   * algorithm can take a refund (GCRA, token bucket: `algorithm.refund`); absent otherwise.
   *
   * Rejects with {@link InvalidKeyError}, {@link InvalidCostError} (units not a non-negative safe
   * integer) or {@link StoreUnavailableError}, like `limit`. A key the store does not hold is
   * already fresh, so a refund to it changes nothing. Pass the `params` of the call whose units
   * come back: a refund moves the state by units of that call's algorithm.
   */
  refund?(key: string, units: number, options?: ParamsOptions): Promise<void>;
  /**
   * Spends `units` of `key` without the admission check, as debt that delays the key's next
   * admissions (a reservation settled above its estimate): never a denial, however far past
   * empty. Present when the algorithm has `algorithm.charge` (GCRA, token bucket), on the memory
   * and Redis stores (one atomic script) and on the layers that wrap them. Rejects like `refund`.
   * Pass the `params` of the call the debt belongs to: it moves the state by units of that call's
   * algorithm, as a refund does.
   */
  charge?(key: string, units: number, options?: ParamsOptions): Promise<void>;
  /**
   * The algorithm a call with `params` (see `LimitOptions.params`) decides with, e.g. for the
   * RateLimit-Policy header of that call. Present on limiters that honour per-call params (every
   * Sluice store and layer, and decorators built with `forwardOptional`); absent, a caller must
   * not pass `params`.
   * @throws {InvalidParamsError} naming the parameter, as the call itself would reject.
   */
  algorithmFor?(params: AlgorithmParams | undefined): Algorithm;
  /**
   * Denies every request of `key` for `durationMs` from now, whatever its state and the limit,
   * with `reason: 'blocked'` (docs/admin.md). A block already running longer is kept; `unblock`
   * ends one. Shared stores keep it beside the key with a TTL, so every instance sees it; leased
   * instances are told through {@link Limiter.invalidations}.
   *
   * Rejects with {@link InvalidKeyError}, {@link InvalidDurationError} (not a finite number of
   * ms ≥ 0; fractions round up) or {@link StoreUnavailableError}.
   */
  block?(key: string, durationMs: number): Promise<void>;
  /** Ends a block of `key` (none: nothing changes). Rejects like `block`. */
  unblock?(key: string): Promise<void>;
  /**
   * Spends `units` of `key` without an admission (a failed login): the key's next admissions
   * wait as if `units` more had been admitted (the windows and the log: as far as the limit;
   * docs/admin.md says what each algorithm does). Rejects with {@link UnsupportedOperationError}
   * when the algorithm gives it no meaning (every shipped one does), else like `refund`.
   */
  penalty?(key: string, units: number): Promise<void>;
  /**
   * Gives `units` back to `key` (never past fresh) and tells every instance, so leased
   * instances drop cached refusals and give back the units they hold: with them, the key's
   * total stays within fresh (docs/leasing.md). Rejects like `penalty`.
   */
  reward?(key: string, units: number): Promise<void>;
  /**
   * Tells every instance sharing the store that `key`'s state changed outside a decision (a
   * reset, block, reward, a new limit), so leased instances drop what they hold for it. Rejects
   * with {@link InvalidKeyError} or {@link StoreUnavailableError}.
   */
  invalidate?(key: string): Promise<void>;
  /** Where this limiter hears of invalidations made by any instance (see {@link Invalidations}). */
  readonly invalidations?: Invalidations;
  /** Releases timers and connections the limiter owns. Idempotent. */
  close(): Promise<void>;
}

/**
 * Called with a key whose state changed outside a decision and how, or with `undefined` (and no
 * change) when any key may have (notifications were lost, e.g. while a subscription reconnected).
 */
export type InvalidationListener = (key: string | undefined, change?: InvalidationChange) => void;

/**
 * How a key changed. After `'reset'` and `'invalidate'` (a new limit, say) units admitted before
 * no longer count, so a leased instance drops the units it holds; after `'reward'` it gives them
 * back (the key's total, held and stored, stays within fresh); after `'block'` and `'unblock'`
 * they stay spent, so it keeps them and asks the remote once before spending more.
 */
export type InvalidationChange = 'reset' | 'block' | 'unblock' | 'reward' | 'invalidate';

/** Invalidations a limiter hears of: every instance's `reset`, `block`, `unblock`, `reward`, `invalidate`. */
export interface Invalidations {
  /** Adds a listener; returns the function that removes it. */
  subscribe(listener: InvalidationListener): () => void;
  /**
   * Whether notifications are being received now. While false, a listener may miss some: a
   * leased limiter then trusts no cached refusal (docs/leasing.md).
   */
  readonly live: boolean;
}

/** A limiter whose decisions are local, so it also answers synchronously without a Promise. */
export interface SyncLimiter extends Limiter {
  limitSync(key: string, options?: LimitOptions): Decision;
  peekSync(key: string, options?: ParamsOptions): Decision;
  resetSync(key: string): void;
}

/** Milliseconds on a clock that never goes backwards. */
export type Clock = () => number;

const loadedPerformance = performance;

/**
 * The default local clock: monotonic, immune to wall-clock steps. It reads the `performance`
 * object present when Sluice loaded (looking the global up costs a getter call per reading);
 * to follow a `performance` replaced later, such as by fake timers, pass `() => performance.now()`.
 * @example
 * ```ts
 * import { createMemoryLimiter, gcra, monotonicClock } from 'sluice';
 *
 * // The default; pass another Clock (ms, never backwards) to share time with something else.
 * const limiter = createMemoryLimiter({ algorithm: gcra({ limit: 10, periodMs: 1_000 }), clock: monotonicClock });
 * ```
 */
export const monotonicClock: Clock = () => loadedPerformance.now();

/**
 * The latest clock reading a limiter accepts: 2^52 µs (about the year 2112 on an epoch clock),
 * so times in microseconds (GCRA's TAT) plus any horizon stay exact integers.
 */
export const MAX_CLOCK_MS = Math.floor(2 ** 52 / 1000);

/**
 * Reads `clock` once, as whole milliseconds. One bad reading written into a key's state would
 * corrupt it for good (NaN compares false, so a key admits or denies forever; a far-future time
 * holds it denied until then), so a reading that is not a number in 0..{@link MAX_CLOCK_MS} is
 * refused for this call. A reading behind an earlier one is accepted: every core counts from
 * its state's newest time instead, so stored time never moves backwards.
 *
 * @throws {ClockError} when the reading is NaN, ±Infinity, negative or past `MAX_CLOCK_MS`.
 */
export function readClock(clock: Clock): number {
  const reading = clock();
  // Comparisons are false for NaN, so NaN falls through with the rest.
  if (typeof reading === 'number' && reading >= 0 && reading <= MAX_CLOCK_MS) return Math.floor(reading);
  throw new ClockError(`the clock read ${String(reading)}; a reading must be a number of ms in 0..${MAX_CLOCK_MS}`);
}

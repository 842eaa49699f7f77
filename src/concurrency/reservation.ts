import type { AlgorithmParams } from '../algorithms/types.js';
import { ChargeRecord } from '../charge.js';
import type { Decision, LimitOptions } from '../decision.js';
import { ConfigError, ReservationError } from '../errors.js';
import { type Clock, type Limiter, monotonicClock } from '../limiter.js';
import {
  costOf,
  type OptionNames,
  orDefault,
  requireDurationMs,
  requireFunction,
  requireOptions,
} from '../validate.js';

/** Options of {@link reserve}. */
export interface ReserveOptions {
  /**
   * Milliseconds within which the reservation can be settled or cancelled; after it, it stands at
   * its estimate and `settle`/`cancel` reject with {@link ReservationError}. Default 60,000.
   */
  ttlMs?: number;
  /** Milliseconds clock for `ttlMs`; default monotonic `performance.now()`. */
  clock?: Clock;
  /**
   * The numbers to reserve under (a plan: per-call params of the limiter's algorithm, as
   * `limit`'s `params`). The settle's refund and debt are made under them too. Absent: the
   * limiter's own.
   */
  params?: AlgorithmParams;
}

/** Units admitted now, whose real cost is known only when the work ends. */
export interface Reservation {
  readonly key: string;
  readonly estimate: number;
  /**
   * Settles at `actual` units: less than the estimate refunds the difference; more charges the
   * excess as debt that delays the key's next admissions (never a denial of this work). Repeating
   * the same settlement resolves like the first call.
   * @throws {InvalidCostError} when `actual` is not a non-negative safe integer.
   * @throws {ReservationError} after `ttlMs`, after a different settlement or `cancel()`, or
   * above the estimate on a limiter without `charge` (the estimate stands).
   * @throws {StoreUnavailableError} when the store could not refund or charge; the settlement
   * is recorded all the same (a retry is not a second refund) and the estimate stands.
   */
  settle(actual: number): Promise<void>;
  /** Gives the whole estimate back: `settle(0)`, and idempotent the same way. */
  cancel(): Promise<void>;
}

/** The answer of {@link reserve}: the limiter's decision, and the reservation when admitted. */
export type Reserved =
  | { readonly allowed: true; readonly decision: Decision; readonly reservation: Reservation }
  | { readonly allowed: false; readonly decision: Decision };

/**
 * Admits `estimate` units of `key` on `limiter` exactly as `limit(key, { cost: estimate })` does
 * (same atomicity, same denial: nothing is charged when denied), and returns a reservation to
 * settle at the real cost afterwards.
 *
 * Crash-safe by construction: the estimate is charged at admission, so a reservation never
 * settled (its process died, or `ttlMs` passed) stands at its estimate; it neither leaks units
 * nor frees units it did not own. A reservation admitted by a failure policy (`decision.degraded`:
 * the store could not decide) charged the store nothing, so settling it refunds and charges nothing. Settling refunds through `limiter.refund` and charges debt
 * through `limiter.charge`, so the key's bound holds with every settled unit counted: at each
 * admission, the units charged before it plus its estimate stay within the algorithm's bound.
 *
 * @example
 * ```ts
 * import { createMemoryLimiter, gcra } from 'sluice';
 * import { reserve } from 'sluice/concurrency';
 *
 * const tokens = createMemoryLimiter({ algorithm: gcra({ limit: 100_000, periodMs: 60_000 }) });
 * const reserved = await reserve(tokens, 'tenant-7', 1000, { ttlMs: 120_000 });
 * if (reserved.allowed) {
 *   const used = 640; // e.g. the LLM's reported token count
 *   await reserved.reservation.settle(used); // refunds 360
 * }
 * ```
 *
 * @throws {ConfigError} when `limiter` cannot take refunds (only GCRA and token bucket can), or
 * `options` is invalid (naming the option).
 * @throws {InvalidKeyError}, {@link InvalidCostError}, {@link InvalidParamsError},
 * {@link StoreUnavailableError} as `limit` does.
 */
export async function reserve(
  limiter: Limiter,
  key: string,
  estimate: number,
  options: ReserveOptions = {},
): Promise<Reserved> {
  requireOptions('reserve options', options, RESERVE_OPTION_NAMES);
  const ttlMs = requireDurationMs('ttlMs', orDefault(options.ttlMs, 60_000));
  const clock = requireFunction('clock', orDefault(options.clock, monotonicClock));
  if (typeof limiter?.refund !== 'function') {
    throw new ConfigError(`reserve needs a limiter that takes refunds (GCRA or token bucket)`);
  }
  const reservedAtMs = clock();
  const { params } = options;
  const limitOptions: LimitOptions = { cost: costOf({ cost: estimate }) };
  if (params !== undefined) limitOptions.params = params;
  const decision = await limiter.limit(key, limitOptions);
  if (!decision.allowed) return { allowed: false, decision };
  // A failure policy's decision charged the store nothing: settling it must neither refund nor charge.
  const record = new ChargeRecord(limiter, key, estimate, params, undefined, decision.degraded !== true);
  return { allowed: true, decision, reservation: openReservation(record, reservedAtMs + ttlMs, clock) };
}

function openReservation(record: ChargeRecord, expiresAtMs: number, clock: Clock): Reservation {
  const settle = async (actual: number): Promise<void> => {
    costOf({ cost: actual });
    if (!record.settled && clock() >= expiresAtMs) {
      throw new ReservationError(`reservation of '${record.key}' expired: it stands at its estimate of ${record.cost}`);
    }
    return record.settle(actual);
  };
  return { key: record.key, estimate: record.cost, settle, cancel: () => settle(0) };
}
const RESERVE_OPTION_NAMES: OptionNames<ReserveOptions> = { ttlMs: true, clock: true, params: true };

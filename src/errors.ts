/**
 * Every error Sluice throws or rejects with is a {@link SluiceError} carrying a stable `code`,
 * so callers can branch on `err.code` (or {@link isSluiceError}) instead of parsing messages.
 * Each message ends with the code's entry in docs/errors.md.
 *
 * | code | class | when |
 * |---|---|---|
 * | `ERR_SLUICE_CONFIG` | {@link ConfigError} | a limiter or store is constructed with invalid options |
 * | `ERR_SLUICE_INVALID_KEY` | {@link InvalidKeyError} | a key is not a string, is empty, is longer than 512 UTF-8 bytes, or is not well-formed UTF-16 (a lone surrogate) |
 * | `ERR_SLUICE_INVALID_COST` | {@link InvalidCostError} | a cost is negative, NaN, non-integer or above `Number.MAX_SAFE_INTEGER` |
 * | `ERR_SLUICE_INVALID_PARAMS` | {@link InvalidParamsError} | a call's `params` are not the algorithm's options, or a value its factory refuses; a hold store's `limit` is not an integer ≥ 1 |
 * | `ERR_SLUICE_CLOCK` | {@link ClockError} | a limiter's clock read NaN, ±Infinity, a negative number or a time past {@link MAX_CLOCK_MS} |
 * | `ERR_SLUICE_STORE_UNAVAILABLE` | {@link StoreUnavailableError} | the shared store failed or answered something unreadable; `cause` holds the original error |
 * | `ERR_SLUICE_INVALID_DURATION` | {@link InvalidDurationError} | a `block` duration is not a finite number of ms ≥ 0, or a hold store's `holdMs` not a whole number of ms ≥ 1 |
 * | `ERR_SLUICE_UNSUPPORTED` | {@link UnsupportedOperationError} | an admin operation (`penalty`, `reward`) has no meaning for the limiter's algorithm |
 * | `ERR_SLUICE_RESERVATION` | {@link ReservationError} | a reservation was settled twice differently, after its `ttlMs`, or above its estimate on a limiter that cannot charge debt |
 * | `ERR_SLUICE_ACQUIRE_TIMEOUT`, `ERR_SLUICE_QUEUE_FULL`, `ERR_SLUICE_COST_OVER_LIMIT`, `ERR_SLUICE_ACQUIRER_CLOSED` | `sluice/outbound` | an `acquire` that would wait too long, finds its key's queue full, asks more than the key can hold, or outlives its acquirer |
 */
export class SluiceError extends Error {
  constructor(
    readonly code: SluiceErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(`${message} ${docsLink(code)}`, options);
    this.name = new.target.name;
  }
}

/** The stable code of every {@link SluiceError}. */
export type SluiceErrorCode =
  | 'ERR_SLUICE_CONFIG'
  | 'ERR_SLUICE_INVALID_KEY'
  | 'ERR_SLUICE_INVALID_COST'
  | 'ERR_SLUICE_INVALID_PARAMS'
  | 'ERR_SLUICE_CLOCK'
  | 'ERR_SLUICE_STORE_UNAVAILABLE'
  | 'ERR_SLUICE_INVALID_DURATION'
  | 'ERR_SLUICE_UNSUPPORTED'
  | 'ERR_SLUICE_RESERVATION'
  | 'ERR_SLUICE_ACQUIRE_TIMEOUT'
  | 'ERR_SLUICE_QUEUE_FULL'
  | 'ERR_SLUICE_COST_OVER_LIMIT'
  | 'ERR_SLUICE_ACQUIRER_CLOSED';

/** Thrown synchronously at construction when options are invalid. Nothing was created. */
export class ConfigError extends SluiceError {
  constructor(message: string) {
    super('ERR_SLUICE_CONFIG', message);
  }
}

/** Rejected by a call whose key is unusable. Nothing was read or written. */
export class InvalidKeyError extends SluiceError {
  constructor(message: string) {
    super('ERR_SLUICE_INVALID_KEY', message);
  }
}

/** Rejected by a call whose cost is unusable. Nothing was read or written. */
export class InvalidCostError extends SluiceError {
  constructor(message: string) {
    super('ERR_SLUICE_INVALID_COST', message);
  }
}

/** Rejected by a `block` whose duration, or a hold store call whose `holdMs`, is unusable. Nothing was read or written. */
export class InvalidDurationError extends SluiceError {
  constructor(message: string) {
    super('ERR_SLUICE_INVALID_DURATION', message);
  }
}

/**
 * Rejected by an admin operation the limiter's algorithm gives no meaning to (e.g. `reward` on a
 * sliding-window log, which cannot tell which admissions to undo). Nothing was read or written.
 */
export class UnsupportedOperationError extends SluiceError {
  constructor(message: string) {
    super('ERR_SLUICE_UNSUPPORTED', message);
  }
}

/**
 * Rejected by a call whose per-call `params` are unusable: not an object, a name the limiter's
 * algorithm does not take (another algorithm's parameter included), or a value the algorithm's
 * factory would refuse at construction; the message names the parameter. Also a hold store call's
 * `limit` that is not an integer ≥ 1. Nothing was read or written.
 */
export class InvalidParamsError extends SluiceError {
  constructor(message: string) {
    super('ERR_SLUICE_INVALID_PARAMS', message);
  }
}

/**
 * Rejected by a call whose clock reading is unusable: not a finite number, negative, or past
 * `MAX_CLOCK_MS`. The reading is refused for that call only; nothing was read or written, so
 * the next call with a good reading decides as if the bad one never happened.
 */
export class ClockError extends SluiceError {
  constructor(message: string) {
    super('ERR_SLUICE_CLOCK', message);
  }
}

/**
 * Rejected when the shared store could not decide: connection refused or lost, a timeout,
 * a script error, or a reply of the wrong shape. The original error is in `cause`.
 * No decision was taken, so whether the request was charged is unknown only if the store
 * applied the script and the reply was lost; Sluice never retries a decision on its own.
 */
export class StoreUnavailableError extends SluiceError {
  constructor(message: string, cause?: unknown) {
    super('ERR_SLUICE_STORE_UNAVAILABLE', message, { cause });
  }
}

/**
 * Rejected by a reservation's `settle` or `cancel` that cannot be applied: the reservation was
 * already settled or cancelled otherwise, its `ttlMs` has passed (it stands at its estimate), or
 * it was settled above its estimate on a limiter without `charge` (the estimate stands, the excess
 * is not charged). Nothing was refunded or charged by the rejected call.
 */
export class ReservationError extends SluiceError {
  constructor(message: string) {
    super('ERR_SLUICE_RESERVATION', message);
  }
}

/**
 * The class of each core code, for {@link isSluiceError}'s narrowing; the codes of higher layers
 * (`sluice/outbound`) narrow to `SluiceError`, as this file may not import their classes.
 */
interface ErrorOfCode {
  ERR_SLUICE_CONFIG: ConfigError;
  ERR_SLUICE_INVALID_KEY: InvalidKeyError;
  ERR_SLUICE_INVALID_COST: InvalidCostError;
  ERR_SLUICE_INVALID_PARAMS: InvalidParamsError;
  ERR_SLUICE_CLOCK: ClockError;
  ERR_SLUICE_STORE_UNAVAILABLE: StoreUnavailableError;
  ERR_SLUICE_RESERVATION: ReservationError;
  ERR_SLUICE_INVALID_DURATION: InvalidDurationError;
  ERR_SLUICE_UNSUPPORTED: UnsupportedOperationError;
}

// A registry symbol, so the ESM and the CommonJS build (two copies of every class when both are
// loaded in one process) brand their errors alike and `instanceof` is never needed.
const BRAND = Symbol.for('sluice.error');
Object.defineProperty(SluiceError.prototype, BRAND, { value: true });

/**
 * Whether `error` is a Sluice error, and with `code` whether it has that code. Use it instead
 * of `instanceof`: when an app loads Sluice both as ES module and as CommonJS (one dependency
 * `import`s it, another `require`s it), each build has its own classes and `instanceof` fails
 * across them; the brand this checks is shared by both.
 * @example
 * ```ts
 * import { createMemoryLimiter, gcra, isSluiceError } from 'sluice';
 *
 * declare const apiKey: string; // from the request
 * const limiter = createMemoryLimiter({ algorithm: gcra({ limit: 10, periodMs: 1_000 }) });
 * try {
 *   await limiter.limit(apiKey);
 * } catch (error) {
 *   if (!isSluiceError(error, 'ERR_SLUICE_INVALID_KEY')) throw error;
 *   // Empty, over 512 bytes or malformed: the client's fault, answer 400.
 * }
 * ```
 */
export function isSluiceError<C extends SluiceErrorCode>(
  error: unknown,
  code: C,
): error is C extends keyof ErrorOfCode ? ErrorOfCode[C] : SluiceError & { readonly code: C };
export function isSluiceError(error: unknown): error is SluiceError;
export function isSluiceError(error: unknown, code?: SluiceErrorCode): boolean {
  if (typeof error !== 'object' || error === null || (error as { [BRAND]?: unknown })[BRAND] !== true) return false;
  return code === undefined || (error as SluiceError).code === code;
}

/** Where docs/errors.md explains `code` (its heading's anchor), appended to messages. */
export function docsLink(code: string): string {
  return `(see docs/errors.md#${code.toLowerCase()})`;
}

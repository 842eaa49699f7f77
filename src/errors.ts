/**
 * Every error Sluice throws or rejects with is a {@link SluiceError} carrying a stable `code`,
 * so callers can branch on `err.code` instead of parsing messages.
 *
 * | code | class | when |
 * |---|---|---|
 * | `ERR_SLUICE_CONFIG` | {@link ConfigError} | a limiter or store is constructed with invalid options |
 * | `ERR_SLUICE_INVALID_KEY` | {@link InvalidKeyError} | a key is not a string, is empty, or is longer than 512 UTF-8 bytes |
 * | `ERR_SLUICE_INVALID_COST` | {@link InvalidCostError} | a cost is negative, NaN, non-integer or above `Number.MAX_SAFE_INTEGER` |
 * | `ERR_SLUICE_CLOCK` | {@link ClockError} | a limiter's clock read NaN, ±Infinity, a negative number or a time past {@link MAX_CLOCK_MS} |
 * | `ERR_SLUICE_STORE_UNAVAILABLE` | {@link StoreUnavailableError} | the shared store failed or answered something unreadable; `cause` holds the original error |
 */
export class SluiceError extends Error {
  constructor(
    readonly code: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = new.target.name;
  }
}

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

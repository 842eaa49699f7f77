import { SluiceError } from '../errors.js';

/**
 * Rejected by `acquire` when the units would not be granted within `maxWaitMs`. Decided as soon
 * as it is known (from the store's `retryAfterMs`), not after waiting. Nothing was charged.
 */
export class AcquireTimeoutError extends SluiceError {
  /** The wait the store announced when the call gave up, or the budget that ran out: whole ms, rounded up like a Decision's. */
  readonly retryAfterMs: number;

  constructor(message: string, retryAfterMs: number) {
    super('ERR_SLUICE_ACQUIRE_TIMEOUT', message);
    this.retryAfterMs = Math.ceil(retryAfterMs);
  }
}

/**
 * Rejected by `acquire` when the key's queue already holds `maxQueueLength` waiters, or the
 * acquirer `maxWaiters` waiters of all keys together. Nothing was charged.
 */
export class QueueFullError extends SluiceError {
  constructor(message: string) {
    super('ERR_SLUICE_QUEUE_FULL', message);
  }
}

/**
 * Rejected at once by `acquire` when the cost exceeds what the key can ever hold (the limiter's
 * `algorithm.limit`: GCRA burst, bucket capacity, window limit), so no wait would admit it.
 */
export class CostOverLimitError extends SluiceError {
  constructor(message: string) {
    super('ERR_SLUICE_COST_OVER_LIMIT', message);
  }
}

/** Rejected for every waiter still queued when the acquirer is closed. Nothing was charged for them. */
export class AcquirerClosedError extends SluiceError {
  constructor(message: string) {
    super('ERR_SLUICE_ACQUIRER_CLOSED', message);
  }
}

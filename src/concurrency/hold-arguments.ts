import { InvalidDurationError, InvalidKeyError, InvalidParamsError } from '../errors.js';
import { checkKey, describe, MAX_KEY_BYTES, MAX_TIMER_MS } from '../validate.js';

/*
 * The checks a hold store makes of what it is called with, before any read or write. Its methods
 * are public, so a direct call gets the same typed errors as one through the limiter: an id, a
 * limit or a holdMs the store cannot keep (a NaN expiry that never passes, a limit that never
 * denies, a renewal of 0 ms that releases) would otherwise be stored.
 */

/**
 * Throws {@link InvalidKeyError} unless `id` is a hold id a key could be: a non-empty, well-formed
 * string of ≤ 512 UTF-8 bytes (a lone surrogate would become U+FFFD in Redis, merging two ids).
 */
export function checkHoldId(id: unknown): asserts id is string {
  try {
    checkKey(id);
  } catch {
    throw new InvalidKeyError(
      `hold id must be a non-empty, well-formed string of at most ${MAX_KEY_BYTES} UTF-8 bytes, got ${describe(id)}`,
    );
  }
}

/** Throws {@link InvalidParamsError} unless `limit`, the most live holds of a key, is an integer ≥ 1. */
export function checkHoldLimit(limit: unknown): asserts limit is number {
  if (!Number.isSafeInteger(limit) || (limit as number) < 1) {
    throw new InvalidParamsError(`limit must be an integer ≥ 1, got ${describe(limit)}`);
  }
}

/** Throws {@link InvalidDurationError} unless `holdMs` is a whole number of ms in 1..2^31 − 1, as the limiter's option. */
export function checkHoldMs(holdMs: unknown): asserts holdMs is number {
  if (!Number.isSafeInteger(holdMs) || (holdMs as number) < 1 || (holdMs as number) > MAX_TIMER_MS) {
    throw new InvalidDurationError(
      `holdMs must be a whole number of ms in 1..${MAX_TIMER_MS}, got ${describe(holdMs)}`,
    );
  }
}

import { type Decision, neverAdmitted } from './decision.js';
import { InvalidDurationError, UnsupportedOperationError } from './errors.js';
import type { InvalidationChange, InvalidationListener, Invalidations } from './limiter.js';

/**
 * The longest block, in ms (2^47, about 4,460 years): far past any use, and small enough that
 * a block's end on any clock Sluice accepts stays an exact integer.
 */
export const MAX_BLOCK_MS = 2 ** 47;

/**
 * The whole milliseconds of a block (fractions round up, so a block never ends early), or
 * {@link InvalidDurationError} for anything but a finite number in 0..{@link MAX_BLOCK_MS}.
 */
export function blockMsOf(durationMs: unknown): number {
  if (typeof durationMs === 'number' && durationMs >= 0 && durationMs <= MAX_BLOCK_MS) return Math.ceil(durationMs);
  throw new InvalidDurationError(`durationMs must be a finite number of ms in 0..2^47, got ${String(durationMs)}`);
}

/**
 * A denial by a block with `leftMs` to run, from the decision the algorithm would have taken
 * (not applied): nothing can be spent, and the retry waits for both the block and the algorithm.
 * A `partial` request's denial says it admitted nothing (`admitted: 0`).
 */
export function blockedDecision(decision: Decision, leftMs: number, partial = false): Decision {
  const waitMs = decision.allowed ? 0 : decision.retryAfterMs;
  const { limit } = decision;
  const resetAfterMs = Math.max(leftMs, decision.resetAfterMs);
  const blocked =
    waitMs === Number.POSITIVE_INFINITY
      ? neverAdmitted({ limit, remaining: 0, resetAfterMs })
      : { allowed: false, limit, remaining: 0, retryAfterMs: Math.max(leftMs, waitMs), resetAfterMs };
  blocked.reason = 'blocked';
  if (partial) blocked.admitted = 0;
  return blocked;
}

/**
 * A partial request's `decision` as the store read it: a denial by a block admitted nothing, and
 * says so (`admitted: 0`) as every other partial answer does. Blocked decisions have a hidden
 * class of their own (they carry `reason`), so the field widens none shared by other decisions.
 */
export function partialBlockRead(decision: Decision): Decision {
  if (decision.reason === 'blocked') decision.admitted = 0;
  return decision;
}

/** The rejection of an admin operation that `algorithm` gives no meaning to (docs/admin.md). */
export function unsupported(operation: string, algorithm: string): UnsupportedOperationError {
  return new UnsupportedOperationError(`${operation} has no meaning for '${algorithm}' (see docs/admin.md)`);
}

/** {@link Invalidations} heard in this process, always live, with the `emit` that tells every listener. */
export interface LocalInvalidations extends Invalidations {
  emit(key: string | undefined, change?: InvalidationChange): void;
}

/** Listeners in a Set, called synchronously by `emit` (a listener must not throw). */
export function createLocalInvalidations(): LocalInvalidations {
  const listeners = new Set<InvalidationListener>();
  return {
    live: true,
    subscribe(listener) {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
    emit(key, change) {
      for (const listener of listeners) listener(key, change);
    },
  };
}

import { type Decision, type DegradedReason, neverAdmitted } from '../decision.js';
import { isSluiceError, type StoreUnavailableError } from '../errors.js';

/*
 * The two policies that need no state. Both keep every Decision field a plain number in its
 * documented range: the store is unknown, so the answer is what a fresh key would show.
 */

/** Fail open: admit. `remaining` is what a fresh key would hold after this request. */
export function failOpen(limit: number, cost: number): Decision {
  return { allowed: true, limit, remaining: Math.max(0, limit - cost), retryAfterMs: 0, resetAfterMs: 0 };
}

/**
 * Fail closed: deny, asking the caller to come back when the store may be reachable again
 * (`retryInMs`, the breaker's remaining cool-down), or never when `cost` exceeds the limit.
 */
export function failClosed(limit: number, cost: number, retryInMs: number): Decision {
  if (cost > limit) return neverAdmitted({ limit, remaining: 0, resetAfterMs: 0 });
  return { allowed: false, limit, remaining: 0, retryAfterMs: Math.max(1, retryInMs), resetAfterMs: 0 };
}

// Codes with which a reachable Redis says it cannot serve right now: availability, not the script.
const UNAVAILABLE_REPLIES = new Set(['LOADING', 'BUSY', 'MASTERDOWN', 'CLUSTERDOWN', 'TRYAGAIN', 'READONLY']);

/**
 * Why the store could not decide. Redis error replies start with an upper-case code
 * (`ERR`, `WRONGTYPE`, `CROSSSLOT`, …): those are script errors, except the codes of a server
 * that cannot serve yet. No cause means the store answered something unreadable. Anything
 * else (refused, reset, closed, offline queue off) is the connection.
 */
export function reasonOf(error: StoreUnavailableError): DegradedReason {
  let cause: unknown = error.cause;
  while (isSluiceError(cause, 'ERR_SLUICE_STORE_UNAVAILABLE')) cause = cause.cause;
  if (cause === undefined) return 'script-error';
  const code = cause instanceof Error ? /^([A-Z][A-Z_]+)(?: |$)/.exec(cause.message)?.[1] : undefined;
  if (code === undefined || UNAVAILABLE_REPLIES.has(code)) return 'connection';
  return 'script-error';
}

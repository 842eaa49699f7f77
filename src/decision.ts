import type { AlgorithmParams } from './algorithms/types.js';

/**
 * The answer to "may this key spend `cost` units now?".
 *
 * Every field is a plain number: no −1 sentinels. Worked example, GCRA 5 per 10 s, burst 5,
 * fresh key at t = 0: `limit(key, { cost: 5 })` → `{ allowed: true, limit: 5, remaining: 0,
 * retryAfterMs: 0, resetAfterMs: 10000 }`; at t = 1 s `limit(key, { cost: 5 })` →
 * `{ allowed: false, remaining: 0, retryAfterMs: 9000, resetAfterMs: 9000 }`.
 */
export interface Decision {
  /** Whether the request was admitted. A denied request consumed nothing. */
  allowed: boolean;
  /** The most units a key can hold at once (GCRA: `burst`; token bucket: `capacity`; windows: `limit`). */
  limit: number;
  /** Integer units still available after this decision, in `0..limit`. */
  remaining: number;
  /**
   * 0 when allowed. When denied: milliseconds until the same request would be admitted if
   * nothing else spends from this key (with a frozen clock, a retry at `now + retryAfterMs`
   * is admitted and one at `now + retryAfterMs − 1` is not). `Infinity` when the cost can
   * never be admitted because it exceeds `limit`.
   */
  retryAfterMs: number;
  /** Milliseconds until the key is back to its fresh state (`remaining === limit`); 0 when it is. */
  resetAfterMs: number;
  /**
   * Present, as `'blocked'`, only on a denial by a `block` of the key (`remaining` is then 0 and
   * `retryAfterMs` counts to the later of the block's end and the time the algorithm admits).
   */
  reason?: 'blocked';
  /**
   * Present, and `true`, only when the store could not decide and a failure policy answered
   * instead (`sluice/policy`); absent on every ordinary decision. Alert on it: a limiter that
   * keeps answering degraded is not limiting across the fleet.
   */
  degraded?: true;
  /** Why the store could not decide; set with {@link Decision.degraded}. */
  degradedReason?: DegradedReason;
  /**
   * The failure policy that answered; set with {@link Decision.degraded}. An HTTP layer can tell
   * a fail-closed denial (the store is down: 503) from a local-fallback denial (over the local
   * share of the limit: 429).
   */
  failure?: FailureMode;
  /**
   * Present only on the answer to a partial request (`limit(key, { cost, partial: true })`):
   * the units admitted, in `0..cost` — as many of `cost` as the key held. `allowed` is then
   * `admitted > 0` (or `cost === 0`); a denial (`admitted === 0`) waits `retryAfterMs` for one unit.
   */
  admitted?: number;
}

/**
 * `decision` (its `limit`, `remaining`, `resetAfterMs`) as a denial no wait ends, the cost being
 * above the limit: `retryAfterMs` is `Infinity`. Its fields are in another order than every other
 * decision's, so V8 gives it a hidden class of its own: one `Infinity` stored in the class all
 * decisions share would make V8 box every later decision's numbers, process-wide, as heap
 * numbers (an allocation each).
 */
export function neverAdmitted(decision: Pick<Decision, 'limit' | 'remaining' | 'resetAfterMs'>): Decision {
  const { limit, remaining, resetAfterMs } = decision;
  return { allowed: false, retryAfterMs: Number.POSITIVE_INFINITY, limit, remaining, resetAfterMs };
}

/**
 * Why a decision was degraded: `'timeout'` (no reply within the deadline), `'connection'`
 * (connection refused or lost, or the store could not serve), `'script-error'` (the store
 * answered with an error or an unreadable reply), `'breaker-open'` (the circuit breaker kept
 * the call from reaching a failing store).
 */
export type DegradedReason = 'timeout' | 'connection' | 'script-error' | 'breaker-open';

/**
 * What a failure policy does when the store cannot decide: `'open'` admits, `'closed'` denies,
 * `'fallback'` decides on a local limiter holding limit ÷ live instances.
 */
export type FailureMode = 'open' | 'closed' | 'fallback';

/**
 * The answer of `peek`: what the key holds now (`remaining`, `resetAfterMs`, from a cost-0
 * decision) and whether one more unit would pass (`allowed`, `retryAfterMs`, from a cost-1
 * decision that was not applied, with its `reason` when blocked).
 */
export function peekDecision(held: Decision, next: Decision): Decision {
  const decision = { ...held, allowed: next.allowed, retryAfterMs: next.retryAfterMs };
  return next.reason === undefined ? decision : { ...decision, reason: next.reason };
}

/** The per-call parameters a `peek` or `refund` takes, matching those of the `limit` it follows. */
export interface ParamsOptions {
  /**
   * This call's numbers for the limiter's algorithm (a plan's limit), replacing the limiter's
   * construction options for this decision only, e.g. `{ limit: 1_000, periodMs: 60_000 }` on
   * GCRA: see `AlgorithmParams`. Checked like construction options: a bad one rejects with
   * `InvalidParamsError` naming it, before anything is read or written. Honoured by limiters
   * that have `algorithmFor` (every Sluice store and layer); docs/algorithms.md says what a
   * key's state means when its numbers change between calls.
   */
  params?: AlgorithmParams;
}

/** Options of one call. */
export interface LimitOptions extends ParamsOptions {
  /** Units this request spends: a non-negative safe integer. Default 1. Cost 0 reports without spending. */
  cost?: number;
  /**
   * Admit as many of `cost` units as the key holds now, atomically, instead of all or nothing
   * (redis_rate's `AllowAtMost`): the decision says how many in {@link Decision.admitted}. When
   * none is held the request is denied, charging nothing, with the wait for one unit. Default
   * `false`; anything but a boolean rejects with `InvalidCostError`.
   */
  partial?: boolean;
  /**
   * The failure policy for this call when the store cannot decide, overriding the limiter's
   * own (e.g. a login route fails closed while the rest fails open). Read only by limiters
   * wrapped with `withFailurePolicy` (`sluice/policy`); others ignore it.
   */
  failure?: FailureMode;
}

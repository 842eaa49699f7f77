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
}

/** Options of one call. */
export interface LimitOptions {
  /** Units this request spends: a non-negative safe integer. Default 1. Cost 0 reports without spending. */
  cost?: number;
}

import { type Decision, neverAdmitted } from '../decision.js';
import { ConfigError } from '../errors.js';
import { type OptionNames, requireInteger, requireOptions } from '../validate.js';
import { ceilDiv } from './integer.js';
import { paramsResolver } from './params.js';
import { share } from './share.js';
import type { Algorithm } from './types.js';

/** Options of {@link tokenBucket}. */
export interface TokenBucketOptions {
  /** Tokens a full bucket holds: the largest burst, reported as `Decision.limit`. Integer ≥ 1. */
  capacity: number;
  /** Tokens added per `periodMs`, continuously (a fraction of a token accrues every millisecond). Integer ≥ 1. */
  rate: number;
  /** Period of the refill rate, in milliseconds. Integer ≥ 1. */
  periodMs: number;
}

const MAX_PERIOD_MS = 10 * 365 * 24 * 3600 * 1000;

const TOKEN_BUCKET_OPTION_NAMES: OptionNames<TokenBucketOptions> = { capacity: true, rate: true, periodMs: true };

/**
 * Token bucket (Turner, 1986; the shaper of RFC 2697): a bucket of `capacity` tokens refilled
 * continuously at `rate` per `periodMs`; a request of cost c takes c tokens or is denied whole.
 *
 * Exact in integers: one token is `periodMs / g` units and the bucket gains `rate / g` units
 * per millisecond (g = gcd(rate, periodMs)), so fractional tokens carry no rounding. State is
 * two numbers per key, the deficit (units missing from a full bucket, so 0 is a fresh key) and
 * the time it was last written. `remaining` is the whole tokens held (floor).
 *
 * Guarantees: a fresh key admits `capacity` units at once; over any interval of length Δ at
 * most `capacity + ⌊Δ · rate / periodMs⌋` units are admitted. `retryAfterMs` is exact.
 *
 * Pros: burst size and sustained rate are separate dials; smooth, no window boundary. Cons: two
 * numbers per key (GCRA holds the same behaviour in one); "per period" is a rate, not a quota.
 *
 * @throws {ConfigError} when options is not an object, capacity, rate or periodMs is not a positive integer, or when
 * `capacity × periodMs / g` is too large to stay exact (2^52 or more).
 * @example
 * ```ts
 * import { createMemoryLimiter, tokenBucket } from 'sluice';
 *
 * // Bursts of up to 50 units, refilled at 10 per second; an export costs 5.
 * const limiter = createMemoryLimiter({ algorithm: tokenBucket({ capacity: 50, rate: 10, periodMs: 1_000 }) });
 * const decision = await limiter.limit('tenant:acme', { cost: 5 });
 * ```
 */
export function tokenBucket(options: TokenBucketOptions): Algorithm {
  requireOptions('tokenBucket options', options, TOKEN_BUCKET_OPTION_NAMES);
  const capacity = requireInteger('capacity', options.capacity);
  const rate = requireInteger('rate', options.rate);
  const periodMs = requireInteger('periodMs', options.periodMs, 1, MAX_PERIOD_MS);
  const g = gcd(rate, periodMs);
  const unit = periodMs / g; // units per token
  const refill = rate / g; // units per millisecond
  const full = capacity * unit;
  // The largest intermediate is a deficit plus a cost of `capacity` tokens: 2 × full.
  if (!Number.isSafeInteger(2 * full + refill)) {
    throw new ConfigError(`capacity × periodMs / gcd(rate, periodMs) must stay below 2^52 to be exact, got ${full}`);
  }

  // The deficit after `elapsedMs` of refill; computed without multiplying a long idle time.
  const refilled = (deficit: number, elapsedMs: number): number =>
    elapsedMs >= ceilDiv(deficit, refill) ? 0 : deficit - elapsedMs * refill;
  const decision = (allowed: boolean, deficit: number, retryAfterMs: number): Decision => ({
    allowed,
    limit: capacity,
    remaining: Math.max(0, capacity - ceilDiv(deficit, unit)), // a charged debt can pass empty
    retryAfterMs,
    resetAfterMs: ceilDiv(deficit, refill),
  });

  return {
    name: 'token-bucket',
    limit: capacity,
    horizonMs: ceilDiv(full, refill),
    slots: 2,
    scriptParams: [capacity, unit, refill],
    replenish: 'steady',
    // Refill `rate` per `periodMs` becomes rate per N × periodMs (ms per token unit × N).
    divide: (n) => tokenBucket({ capacity: share(capacity, n), rate: refill, periodMs: unit * n }),
    withParams: paramsResolver('tokenBucket', ['capacity', 'rate', 'periodMs'], options, tokenBucket),
    decide(state, offset, nowMs, cost, commit) {
      const lastMs = state[offset + 1] as number;
      const t = Math.max(nowMs, lastMs); // a clock behind the last write does not refill backwards
      const deficit = refilled(state[offset] as number, t - lastMs);
      if (cost > capacity) return neverAdmitted(decision(false, deficit, 0));
      const next = deficit + cost * unit;
      if (next > full) return decision(false, deficit, ceilDiv(next - full, refill));
      if (commit && cost > 0) {
        state[offset] = next;
        state[offset + 1] = t;
      }
      return decision(true, next, 0);
    },
    freshAtMs(state, offset) {
      return (state[offset + 1] as number) + ceilDiv(state[offset] as number, refill);
    },
    refund(state, offset, nowMs, units) {
      // Refill up to now first, then take units × unit off the deficit; 0 is a full bucket.
      const lastMs = state[offset + 1] as number;
      const t = Math.max(nowMs, lastMs);
      state[offset] = Math.max(0, refilled(state[offset] as number, t - lastMs) - units * unit);
      state[offset + 1] = t;
    },
    charge(state, offset, nowMs, units) {
      // Refill up to now, then the deficit grows by units × unit, past a full bucket's if need be.
      const lastMs = state[offset + 1] as number;
      const t = Math.max(nowMs, lastMs);
      const deficit = refilled(state[offset] as number, t - lastMs) + units * unit;
      state[offset] = Math.min(deficit, Number.MAX_SAFE_INTEGER);
      state[offset + 1] = t;
    },
  };
}

function gcd(a: number, b: number): number {
  return b === 0 ? a : gcd(b, a % b);
}

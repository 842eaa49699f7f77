import type { TokenBucketOptions } from '../../algorithms/token-bucket.js';
import { historyModel } from './history.js';
import type { ReferenceModel } from './types.js';

/**
 * Token bucket as the bucket itself: tokens held (not the core's deficit), replayed request by
 * request from a full bucket, refilled by `elapsed × rate / periodMs` and capped at capacity.
 * Tokens are exact fractions with denominator `periodMs` (BigInt numerators).
 */
export function tokenBucketReference({ capacity, rate, periodMs }: TokenBucketOptions): ReferenceModel {
  const period = BigInt(periodMs);
  // A request admitted under a limit other than `capacity` had per-call params capacity = rate = limit.
  const paramsOf = (limit: number) => (limit === capacity ? { capacity, rate } : { capacity: limit, rate: limit });
  const gcdOf = (a: bigint, b: bigint): bigint => (b === 0n ? a : gcdOf(b, a % b));
  return historyModel({
    limit: capacity,
    horizonMs: Math.ceil((capacity * periodMs) / rate) + 1,
    used(history, atMs, limitNow) {
      let params = paramsOf(history[0]?.limit ?? limitNow);
      let full = BigInt(params.capacity) * period;
      let tokens = full;
      let lastMs = history[0]?.atMs ?? atMs;
      // Under other numbers the bucket keeps what it misses in the store's terms: the missing
      // tokens in units of 1 / gcd(rate, periodMs) of a token, whatever a unit is worth after.
      const switchTo = (limit: number) => {
        const next = paramsOf(limit);
        if (next.capacity === params.capacity && next.rate === params.rate) return;
        const g = gcdOf(BigInt(params.rate), period);
        const gNext = gcdOf(BigInt(next.rate), period);
        const missing = ((full - tokens) / g) * gNext;
        params = next;
        full = BigInt(params.capacity) * period;
        tokens = full - missing;
      };
      const refilledAt = (t: number) => {
        const more = tokens + BigInt(t - lastMs) * BigInt(params.rate);
        return more < full ? more : full;
      };
      // The core reads the time since its last write under the new numbers: switch, then refill.
      for (const request of history) {
        switchTo(request.limit);
        tokens = refilledAt(request.atMs) - BigInt(request.cost) * period;
        lastMs = request.atMs;
      }
      switchTo(limitNow);
      tokens = refilledAt(atMs);
      // Whole tokens held count as available; the rest of the capacity is used.
      const held = tokens < 0n ? -((-tokens + period - 1n) / period) : tokens / period;
      return params.capacity - Number(held);
    },
  });
}

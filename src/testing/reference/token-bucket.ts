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
  const full = BigInt(capacity) * period;
  return historyModel({
    limit: capacity,
    horizonMs: Math.ceil((capacity * periodMs) / rate) + 1,
    used(history, atMs) {
      let tokens = full;
      let lastMs = history[0]?.atMs ?? atMs;
      const refilledAt = (t: number) => {
        const more = tokens + BigInt(t - lastMs) * BigInt(rate);
        return more < full ? more : full;
      };
      for (const request of history) {
        tokens = refilledAt(request.atMs) - BigInt(request.cost) * period;
        lastMs = request.atMs;
      }
      // Whole tokens held count as available; the rest of the capacity is used.
      return capacity - Number(refilledAt(atMs) / period);
    },
  });
}

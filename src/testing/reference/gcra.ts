import type { ReferenceModel } from './types.js';

/**
 * GCRA as the continuous-state leaky bucket of ITU-T I.371 (the second of its two equivalent
 * forms; the core uses virtual scheduling). A bucket holds X µs of work and drains 1 µs per µs;
 * a request of cost c adds c·T and conforms when the bucket then holds at most burst·T.
 * BigInt arithmetic, so there is nothing to round but the documented T = ⌈periodMs·1000 / limit⌉ µs.
 * Takes the parameters of `gcra()` (`limit` units per `periodMs` ms, `burst` default `limit`);
 * its `decide(key, nowMs, cost)` answers what the core should, for keys it holds in a Map.
 * @example
 * ```ts
 * import { deepStrictEqual } from 'node:assert/strict';
 * import { createMemoryLimiter, type Decision, gcra } from 'sluice';
 * import { gcraReference } from 'sluice/testing';
 *
 * const model = gcraReference(10, 1_000);
 * const limiter = createMemoryLimiter({ algorithm: gcra({ limit: 10, periodMs: 1_000 }), clock: () => 5_000 });
 * const pick = ({ allowed, remaining, retryAfterMs }: Decision) => ({ allowed, remaining, retryAfterMs });
 * deepStrictEqual(pick(limiter.limitSync('k', { cost: 3 })), pick(model.decide('k', 5_000, 3)));
 * ```
 */
export function gcraReference(baseLimit: number, periodMs: number, baseBurst = baseLimit): ReferenceModel {
  const buckets = new Map<string, { level: bigint; at: bigint }>();
  const ceilMs = (us: bigint) => Number((us + 999n) / 1000n);

  return {
    // A call's own limit (burst = limit) changes T and the bucket's size; the work it holds, in
    // µs, stays: owed time carries over a change.
    decide(key, nowMs, cost, callLimit) {
      const limit = callLimit ?? baseLimit;
      const burst = callLimit ?? baseBurst;
      const interval = (BigInt(periodMs) * 1000n + BigInt(limit) - 1n) / BigInt(limit);
      const capacity = BigInt(burst) * interval;
      const now = BigInt(nowMs) * 1000n;
      const bucket = buckets.get(key) ?? { level: 0n, at: now };
      const drained = bucket.at > now ? bucket.level : bucket.level - (now - bucket.at);
      const level = drained > 0n ? drained : 0n;
      const filled = level + BigInt(cost) * interval;
      const allowed = filled <= capacity;
      if (allowed && cost > 0) buckets.set(key, { level: filled, at: now });
      const held = allowed ? filled : level;
      let retryAfterMs = 0;
      if (!allowed) retryAfterMs = cost > burst ? Number.POSITIVE_INFINITY : ceilMs(filled - capacity);
      return {
        allowed,
        limit: burst,
        remaining: Number((capacity - held) / interval),
        retryAfterMs,
        resetAfterMs: ceilMs(held),
      };
    },
  };
}

import type { ReferenceModel } from './types.js';

/**
 * GCRA as the continuous-state leaky bucket of ITU-T I.371 (the second of its two equivalent
 * forms; the core uses virtual scheduling). A bucket holds X µs of work and drains 1 µs per µs;
 * a request of cost c adds c·T and conforms when the bucket then holds at most burst·T.
 * BigInt arithmetic, so there is nothing to round but the documented T = ⌈periodMs·1000 / limit⌉ µs.
 * Takes the parameters of `gcra()` (`limit` units per `periodMs` ms, `burst` default `limit`);
 * its `decide(key, nowMs, cost)` answers what the core should, for keys it holds in a Map.
 * `refund` pours units·T out of the bucket (never below empty), `charge` pours it in past the
 * brim (debt the next requests wait out), as `Limiter.refund` and `Limiter.charge` under the
 * model's own `limit`.
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
  const intervalOf = (limit: number) => (BigInt(periodMs) * 1000n + BigInt(limit) - 1n) / BigInt(limit);
  // The work the bucket holds at `now`: what it held, drained since, never below empty.
  const levelAt = (key: string, now: bigint) => {
    const bucket = buckets.get(key) ?? { level: 0n, at: now };
    const drained = bucket.at > now ? bucket.level : bucket.level - (now - bucket.at);
    return drained > 0n ? drained : 0n;
  };
  // A refund pours work out (an empty bucket stays empty); a charge pours it in past the brim.
  const pour = (key: string, nowMs: number, units: number) => {
    const now = BigInt(nowMs) * 1000n;
    const level = levelAt(key, now) + BigInt(units) * intervalOf(baseLimit);
    buckets.set(key, { level: level > 0n ? level : 0n, at: now });
  };

  return {
    // A call's own limit (burst = limit) changes T and the bucket's size; the work it holds, in
    // µs, stays: owed time carries over a change.
    decide(key, nowMs, cost, callLimit) {
      const limit = callLimit ?? baseLimit;
      const burst = callLimit ?? baseBurst;
      const interval = intervalOf(limit);
      const capacity = BigInt(burst) * interval;
      const now = BigInt(nowMs) * 1000n;
      const level = levelAt(key, now);
      const filled = level + BigInt(cost) * interval;
      const allowed = filled <= capacity;
      if (allowed && cost > 0) buckets.set(key, { level: filled, at: now });
      const held = allowed ? filled : level;
      let retryAfterMs = 0;
      if (!allowed) retryAfterMs = cost > burst ? Number.POSITIVE_INFINITY : ceilMs(filled - capacity);
      return {
        allowed,
        limit: burst,
        remaining: held > capacity ? 0 : Number((capacity - held) / interval),
        retryAfterMs,
        resetAfterMs: ceilMs(held),
      };
    },
    refund: (key, nowMs, units) => pour(key, nowMs, -units),
    charge: (key, nowMs, units) => pour(key, nowMs, units),
  };
}

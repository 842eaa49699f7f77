import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type Algorithm, ConfigError, createShardedLimiter, gcra } from '../../src/index.js';
import { createRedisLimiter } from '../../src/stores/redis/index.js';
import { manualClock } from '../../src/testing/index.js';
import { useRedisServer } from '../support/redis-server.js';

const { redis } = useRedisServer();

let prefixes = 0;
function sharded(algorithm: Algorithm, shards: number, now: () => number) {
  const prefix = `shard${++prefixes}:`;
  const limiter = createShardedLimiter({
    algorithm,
    shards,
    create: (shardAlgorithm) => createRedisLimiter({ client: redis(), algorithm: shardAlgorithm, prefix, clock: now }),
  });
  return { limiter, prefix };
}

describe('hot-key sharding', () => {
  it('rejects shard counts it cannot honour at construction', () => {
    const algorithm = gcra({ limit: 10, periodMs: 1000 });
    for (const shards of [0, 1, 1.5, Number.NaN, 1025, 11]) {
      expect(() => sharded(algorithm, shards, Date.now), String(shards)).toThrow(ConfigError);
    }
  });

  it('splits rate and burst: 4 sub-keys of 5 per 10 s each, on distinct hash tags', async () => {
    const clock = manualClock();
    const { limiter, prefix } = sharded(gcra({ limit: 20, periodMs: 10_000 }), 4, clock.now);
    const decisions = [];
    for (let i = 0; i < 21; i++) decisions.push(await limiter.limit('hot'));
    expect(decisions.filter((d) => d.allowed)).toHaveLength(20);
    expect(decisions[20]).toMatchObject({ allowed: false, limit: 20, remaining: 0 });
    const keys = (await redis().keys(`${prefix}*`)).sort();
    expect(keys).toEqual([0, 1, 2, 3].map((i) => `${prefix}{hot#${i}}`));
    // Each sub-key refills at a quarter of the rate: one unit per 2 s, so 4 per 2 s in total.
    clock.advance(2000);
    const refilled = [];
    for (let i = 0; i < 5; i++) refilled.push((await limiter.limit('hot')).allowed);
    expect(refilled).toEqual([true, true, true, true, false]);
  });

  it('loses burst mod k: 10 over 4 sub-keys admits 8 at once, and a cost above ⌊B/k⌋ never passes', async () => {
    const { limiter } = sharded(gcra({ limit: 10, periodMs: 10_000 }), 4, manualClock().now);
    const first = await limiter.limit('k');
    expect(first).toMatchObject({ allowed: true, limit: 8, remaining: 4 });
    expect((await limiter.limit('k', { cost: 3 })).retryAfterMs).toBe(Number.POSITIVE_INFINITY);
  });

  it('peek sums the sub-keys and spends nothing; reset clears every sub-key', async () => {
    const clock = manualClock();
    const { limiter, prefix } = sharded(gcra({ limit: 12, periodMs: 10_000 }), 3, clock.now);
    for (let i = 0; i < 5; i++) await limiter.limit('k');
    expect((await limiter.peek('k')).remaining).toBe(7);
    expect((await limiter.peek('k')).remaining).toBe(7);
    await limiter.reset('k');
    expect(await redis().keys(`${prefix}*`)).toEqual([]);
    expect((await limiter.peek('k')).remaining).toBe(12);
  });

  it('never admits more than the unsharded bound B + ⌊Δ/T⌋ over any interval', async () => {
    const B = 12;
    const periodMs = 12_000; // T = 1 s
    const step = fc.record({
      advanceMs: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 3000 })),
      cost: fc.integer({ min: 0, max: 4 }),
    });
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 2, max: 4 }),
        fc.array(step, { minLength: 1, maxLength: 60 }),
        async (k, steps) => {
          const clock = manualClock();
          const { limiter } = sharded(gcra({ limit: B, periodMs }), k, clock.now);
          const admitted: { at: number; cost: number }[] = [];
          for (const { advanceMs, cost } of steps) {
            clock.advance(advanceMs);
            if ((await limiter.limit('k', { cost })).allowed) admitted.push({ at: clock.now(), cost });
          }
          for (let i = 0; i < admitted.length; i++) {
            let sum = 0;
            for (let j = i; j < admitted.length; j++) {
              sum += (admitted[j] as { cost: number }).cost;
              const span = (admitted[j] as { at: number }).at - (admitted[i] as { at: number }).at;
              expect(sum).toBeLessThanOrEqual(B + Math.floor(span / 1000));
            }
          }
        },
      ),
      { numRuns: 40 },
    );
  });
});

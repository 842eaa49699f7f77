import fc from 'fast-check';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Algorithm,
  createMemoryLimiter,
  fixedWindow,
  gcra,
  type Limiter,
  slidingWindowLog,
  tokenBucket,
} from '../../src/index.js';
import { createRedisLimiter } from '../../src/stores/redis/index.js';
import { manualClock } from '../../src/testing/index.js';
import { type RedisServer, startRedis } from '../support/redis-server.js';

// Refund is what lease return rests on: the state moves back by the units given back, never
// past fresh, on memory and Redis alike, and Redis keys keep a TTL.

let server: RedisServer;
let redis: Redis;
let prefixes = 0;

beforeAll(async () => {
  server = await startRedis();
  redis = server.connect();
});
afterAll(() => server.stop());

const refundable: [string, () => Algorithm][] = [
  ['gcra', () => gcra({ limit: 5, periodMs: 10_000 })],
  ['token-bucket', () => tokenBucket({ capacity: 5, rate: 5, periodMs: 10_000 })],
];

function stores(algorithm: Algorithm) {
  const clock = manualClock();
  const prefix = `refund:${++prefixes}:`;
  return {
    clock,
    prefix,
    memory: createMemoryLimiter({ algorithm, clock: clock.now, pruneIntervalMs: 0 }),
    redis: createRedisLimiter({ client: redis, algorithm, clock: clock.now, prefix }),
  };
}

describe.each(refundable)('%s refund', (_name, build) => {
  for (const store of ['memory', 'redis'] as const) {
    describe(store, () => {
      it('gives back exactly the units refunded', async () => {
        const { [store]: limiter, clock } = stores(build());
        const refund = limiter.refund as NonNullable<Limiter['refund']>;
        expect((await limiter.limit('k', { cost: 5 })).remaining).toBe(0);
        clock.advance(500);
        await refund('k', 2);
        expect((await limiter.peek('k')).remaining).toBe(2);
        expect((await limiter.limit('k', { cost: 2 })).allowed).toBe(true);
        expect((await limiter.limit('k', { cost: 1 })).allowed).toBe(false);
      });

      it('never refunds past fresh: a key holds at most its limit', async () => {
        const { [store]: limiter } = stores(build());
        const refund = limiter.refund as NonNullable<Limiter['refund']>;
        await limiter.limit('k', { cost: 1 });
        await refund('k', 100);
        expect((await limiter.peek('k')).remaining).toBe(5);
        expect((await limiter.limit('k', { cost: 5 })).allowed).toBe(true);
        expect((await limiter.limit('k', { cost: 1 })).allowed).toBe(false);
      });

      it('a refund to a key the store does not hold changes nothing', async () => {
        const { [store]: limiter } = stores(build());
        await (limiter.refund as NonNullable<Limiter['refund']>)('absent', 3);
        expect((await limiter.peek('absent')).remaining).toBe(5);
      });

      it('rejects bad units and keys with typed errors, changing nothing', async () => {
        const { [store]: limiter } = stores(build());
        const refund = limiter.refund as NonNullable<Limiter['refund']>;
        await limiter.limit('k', { cost: 3 });
        for (const units of [-1, 1.5, Number.NaN]) {
          await expect(refund('k', units)).rejects.toMatchObject({ code: 'ERR_SLUICE_INVALID_COST' });
        }
        await expect(refund('', 1)).rejects.toMatchObject({ code: 'ERR_SLUICE_INVALID_KEY' });
        expect((await limiter.peek('k')).remaining).toBe(2);
      });
    });
  }

  it('Redis: a partial refund keeps a TTL equal to the time until fresh; a full one deletes the key', async () => {
    const { redis: limiter, clock, prefix } = stores(build());
    const refund = limiter.refund as NonNullable<Limiter['refund']>;
    await limiter.limit('k', { cost: 4 });
    clock.advance(100);
    await refund('k', 1);
    // 3 units outstanding at 2 s each, 100 ms of which have passed.
    const pttl = await redis.pttl(`${prefix}{k}`);
    expect(pttl).toBeGreaterThan(5_800);
    expect(pttl).toBeLessThanOrEqual(5_900);
    await refund('k', 3);
    expect(await redis.exists(`${prefix}{k}`)).toBe(0);
  });

  it('memory and Redis agree on random sequences of limits, refunds and waits', async () => {
    const op = fc.record({
      advanceMs: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 4_000 })),
      kind: fc.constantFrom('limit', 'refund'),
      units: fc.integer({ min: 0, max: 6 }),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 30 }), async (ops) => {
        const { memory, redis: remote, clock } = stores(build());
        for (const { advanceMs, kind, units } of ops) {
          clock.advance(advanceMs);
          if (kind === 'refund') {
            await memory.refund?.('k', units);
            await remote.refund?.('k', units);
          } else {
            expect(await remote.limit('k', { cost: units })).toEqual(await memory.limit('k', { cost: units }));
          }
          expect(await remote.peek('k')).toEqual(await memory.peek('k'));
        }
      }),
      { numRuns: 40 },
    );
  });
});

describe('algorithms without a refund', () => {
  it('their limiters have no refund, on memory and Redis', () => {
    for (const algorithm of [
      fixedWindow({ limit: 5, windowMs: 1000 }),
      slidingWindowLog({ limit: 5, windowMs: 1000 }),
    ]) {
      expect(createMemoryLimiter({ algorithm, pruneIntervalMs: 0 }).refund).toBeUndefined();
      expect(createRedisLimiter({ client: redis, algorithm }).refund).toBeUndefined();
    }
  });
});

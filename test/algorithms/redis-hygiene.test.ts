import { describe, expect, it } from 'vitest';
import type { AlgorithmName } from '../../src/index.js';
import { createRedisLimiter } from '../../src/stores/redis/index.js';
import { profiles } from '../../src/testing/profiles.js';
import { useRedisServer } from '../support/redis-server.js';
import { freshPrefix, T0 } from './stores.js';

const LIMIT = 3;
const PERIOD_MS = 3000;
/** The longest TTL each algorithm may set (issue 3): the time until full, one window, or two. */
const bound: Record<AlgorithmName, number> = {
  gcra: PERIOD_MS,
  'token-bucket': PERIOD_MS,
  'fixed-window': PERIOD_MS,
  'sliding-window-log': PERIOD_MS,
  'sliding-window-counter': 2 * PERIOD_MS,
};

describe.each(profiles)('Redis key hygiene: $name', (profile) => {
  it('declares the bound as its horizon', () => {
    expect(profile.build(LIMIT, PERIOD_MS).horizonMs).toBe(bound[profile.name]);
  });
});

// The same checks on each server: the scripts' TTLs must hold on Valkey 8 as on Redis.
describe.each(['redis', 'valkey'] as const)('%s-server', (server) => {
  const { redis } = useRedisServer({ server });

  describe.each(profiles)('key hygiene: $name', (profile) => {
    const setup = () => {
      let nowMs = T0;
      const prefix = freshPrefix('hyg');
      const algorithm = profile.build(LIMIT, PERIOD_MS);
      const limiter = createRedisLimiter({ client: redis(), algorithm, prefix, clock: () => nowMs });
      return {
        algorithm,
        limiter,
        prefix,
        advance: (ms: number) => (nowMs += ms),
        /** Every key under the prefix: 0 < PTTL ≤ the bound. */
        async expectTtls() {
          const keys = await redis().keys(`${prefix}*`);
          for (const key of keys) {
            const pttl = await redis().pttl(key);
            expect(pttl, key).toBeGreaterThan(0);
            expect(pttl, key).toBeLessThanOrEqual(bound[profile.name]);
          }
          return keys.length;
        },
      };
    };

    it('after a first call, a call of cost > 1 and a denial, every key has 0 < PTTL ≤ the bound', async () => {
      const { limiter, prefix, advance, expectTtls } = setup();
      const first = await limiter.limit('a');
      expect(await expectTtls()).toBe(1);
      if (profile.name === 'gcra' || profile.name === 'token-bucket') {
        // Time until full: exactly what the decision reports.
        expect(await redis().pttl(`${prefix}{a}`)).toBeLessThanOrEqual(first.resetAfterMs);
      }
      advance(100);
      expect((await limiter.limit('b', { cost: LIMIT })).allowed).toBe(true);
      expect(await expectTtls()).toBe(2);
      expect((await limiter.limit('b')).allowed).toBe(false);
      expect((await limiter.limit('c', { cost: LIMIT + 1 })).allowed).toBe(false);
      expect(await redis().exists(`${prefix}{c}`)).toBe(0);
      expect(await expectTtls()).toBe(2);
    });

    it('after any sequence of calls, no key lacks a TTL or outlives the bound', async () => {
      const { limiter, advance, expectTtls } = setup();
      for (let i = 0; i < 90; i++) {
        advance((i * 397) % 1100);
        await limiter.limit(['a', 'b', 'c'][i % 3] as string, { cost: (i * 7) % 5 });
        if (i % 10 === 9) await expectTtls();
      }
      expect(await expectTtls()).toBeGreaterThan(0);
    });

    it('treats a planted counter of 57 without TTL as a fresh key, starting at the request cost', async () => {
      const { limiter, prefix, expectTtls } = setup();
      await redis().set(`${prefix}{k}`, '57');
      expect(await limiter.limit('k', { cost: 2 })).toMatchObject({ allowed: true, remaining: LIMIT - 2 });
      expect(await limiter.limit('k')).toMatchObject({ allowed: true, remaining: 0 });
      expect(await expectTtls()).toBe(1);
    });

    it('treats planted state of the right type but without TTL as fresh', async () => {
      const { limiter, prefix, expectTtls } = setup();
      const key = `${prefix}{k}`;
      // Exhausted-looking state that Sluice did not write (no TTL).
      const plant: Record<AlgorithmName, () => Promise<unknown>> = {
        gcra: () => redis().set(key, String((T0 + 10 * PERIOD_MS) * 1000)),
        'token-bucket': () => redis().hset(key, { d: 3000, t: T0 }),
        'fixed-window': () => redis().hset(key, { n: 57, e: T0 + PERIOD_MS }),
        'sliding-window-log': () => redis().zadd(key, T0, '1:57'),
        'sliding-window-counter': () => redis().hset(key, { c: 57, p: 57, s: T0 }),
      };
      await plant[profile.name]();
      expect(await redis().pttl(key)).toBe(-1);
      expect(await limiter.limit('k', { cost: 2 })).toMatchObject({ allowed: true, remaining: LIMIT - 2 });
      expect(await expectTtls()).toBe(1);
      const stored: Record<AlgorithmName, () => Promise<unknown>> = {
        gcra: async () => Number(await redis().get(key)) - T0 * 1000,
        'token-bucket': () => redis().hget(key, 'd'),
        'fixed-window': () => redis().hget(key, 'n'),
        'sliding-window-log': () => redis().zrange(key, 0, -1),
        'sliding-window-counter': () => redis().hmget(key, 'c', 'p'),
      };
      const expected: Record<AlgorithmName, unknown> = {
        gcra: 2000 * 1000,
        'token-bucket': '2000',
        'fixed-window': '2',
        'sliding-window-log': ['1:2'],
        'sliding-window-counter': ['2', '0'],
      };
      expect(await stored[profile.name]()).toEqual(expected[profile.name]);
    });
  });
});

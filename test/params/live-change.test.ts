import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Algorithm,
  type AlgorithmParams,
  createMemoryLimiter,
  type Decision,
  fixedWindow,
  gcra,
  type Limiter,
  slidingWindowCounter,
  slidingWindowLog,
  tokenBucket,
} from '../../src/index.js';
import { createRedisLimiter } from '../../src/stores/redis/index.js';
import { freshPrefix, T0 } from '../algorithms/stores.js';
import { held } from '../support/held-keys.js';
import { type RedisServer, startRedis } from '../support/redis-server.js';

// The plans of the issue: free 100/min, pro 1,000/min, as each algorithm spells them.
const windows = { free: { limit: 100, windowMs: 60_000 }, pro: { limit: 1_000, windowMs: 60_000 } };
const rates = { free: { limit: 100, periodMs: 60_000 }, pro: { limit: 1_000, periodMs: 60_000 } };
const buckets = {
  free: { capacity: 100, rate: 100, periodMs: 60_000 },
  pro: { capacity: 1_000, rate: 1_000, periodMs: 60_000 },
};

interface Expected {
  /** Upgrade: 100 free units at t = 10 s, then the next pro request at 10 s. */
  upgradeNext: Pick<Decision, 'allowed' | 'retryAfterMs'>;
  /** How many more pro units pass at once after it (at 10 s, or at its retry time if it was denied). */
  upgradeMore: number;
  /** Downgrade: 500 pro units at t = 10 s, then free requests: the first time one passes (ms from T0). */
  downgradeFirstAtMs: number;
  /** How many free units pass at once then. */
  downgradeBurst: number;
}

const cases: {
  name: string;
  algorithm: Algorithm;
  plans: { free: AlgorithmParams; pro: AlgorithmParams };
  expected: Expected;
}[] = [
  {
    name: 'gcra',
    algorithm: gcra(rates.free),
    plans: rates,
    // Owed time carries: 100 free units are 60 s owed, which is pro's whole burst.
    expected: {
      upgradeNext: { allowed: false, retryAfterMs: 60 },
      upgradeMore: 0,
      downgradeFirstAtMs: 10_000,
      downgradeBurst: 50,
    },
  },
  {
    name: 'token-bucket',
    algorithm: tokenBucket(buckets.free),
    plans: buckets,
    expected: {
      upgradeNext: { allowed: false, retryAfterMs: 60 },
      upgradeMore: 0,
      downgradeFirstAtMs: 10_000,
      downgradeBurst: 50,
    },
  },
  {
    name: 'fixed-window',
    algorithm: fixedWindow(windows.free),
    plans: windows,
    expected: {
      upgradeNext: { allowed: true, retryAfterMs: 0 },
      upgradeMore: 899,
      downgradeFirstAtMs: 70_000,
      downgradeBurst: 100,
    },
  },
  {
    name: 'sliding-window-log',
    algorithm: slidingWindowLog(windows.free),
    plans: windows,
    expected: {
      upgradeNext: { allowed: true, retryAfterMs: 0 },
      upgradeMore: 899,
      downgradeFirstAtMs: 70_000,
      downgradeBurst: 100,
    },
  },
  {
    name: 'sliding-window-counter',
    algorithm: slidingWindowCounter(windows.free),
    plans: windows,
    // 500 in the window opened at 10 s weigh ⌊500 × (60,000 − e) / 60,000⌋, at most 99 from e = 48,001 ms.
    expected: {
      upgradeNext: { allowed: true, retryAfterMs: 0 },
      upgradeMore: 899,
      downgradeFirstAtMs: 118_001,
      downgradeBurst: 1,
    },
  },
];

let server: RedisServer;
let redis: Redis;
beforeAll(async () => {
  server = await startRedis();
  redis = server.connect();
});
afterAll(() => server.stop());

type Build = (algorithm: Algorithm, clock: () => number) => Limiter;
const stores: [string, Build][] = [
  ['memory', (algorithm, clock) => createMemoryLimiter({ algorithm, clock, pruneIntervalMs: 0 })],
  [
    'redis',
    (algorithm, clock) =>
      createRedisLimiter({ client: held(redis), algorithm, prefix: freshPrefix('live'), clock, onWarning: false }),
  ],
  [
    'redis batched',
    (algorithm, clock) =>
      createRedisLimiter({
        client: held(redis),
        algorithm,
        prefix: freshPrefix('live'),
        clock,
        batch: true,
        onWarning: false,
      }),
  ],
];

/** Spends one unit at a time until a denial; how many passed. */
async function drain(limiter: Limiter, key: string, params: AlgorithmParams): Promise<number> {
  let passed = 0;
  while ((await limiter.limit(key, { params })).allowed) passed++;
  return passed;
}

describe.each(stores)('a live key whose plan changes, %s', (_store, build) => {
  it.each(cases)(
    '$name: upgrade free → pro after 100 spent at 10 s, downgrade pro → free after 500',
    async ({ algorithm, plans, expected }) => {
      let nowMs = T0 + 10_000;
      const limiter = build(algorithm, () => nowMs);
      expect((await limiter.limit('up', { cost: 100, params: plans.free })).allowed).toBe(true);
      const next = await limiter.limit('up', { params: plans.pro });
      expect({ allowed: next.allowed, retryAfterMs: next.retryAfterMs, limit: next.limit }).toEqual({
        ...expected.upgradeNext,
        limit: 1_000,
      });
      nowMs += next.retryAfterMs;
      const more = await drain(limiter, 'up', plans.pro);
      expect(next.allowed ? more : more - 1).toBe(expected.upgradeMore);

      nowMs = T0 + 10_000;
      expect((await limiter.limit('down', { cost: 500, params: plans.pro })).allowed).toBe(true);
      const first = await limiter.peek('down', { params: plans.free });
      const firstAtMs = nowMs - T0 + (first.allowed ? 0 : first.retryAfterMs);
      expect(firstAtMs).toBe(expected.downgradeFirstAtMs);
      expect(first.remaining).toBe(first.allowed ? expected.downgradeBurst : 0);
      if (!first.allowed) {
        nowMs = T0 + firstAtMs - 1;
        expect((await limiter.limit('down', { params: plans.free })).allowed).toBe(false);
      }
      nowMs = T0 + firstAtMs;
      expect(await drain(limiter, 'down', plans.free)).toBe(expected.downgradeBurst);
      await limiter.close();
    },
  );
});

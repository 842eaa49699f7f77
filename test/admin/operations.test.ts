import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Algorithm,
  createLeasedLimiter,
  createMemoryLimiter,
  createShardedLimiter,
  fixedWindow,
  gcra,
  isSluiceError,
  type Limiter,
  slidingWindowCounter,
  slidingWindowLog,
  tokenBucket,
} from '../../src/index.js';
import { createRedisLimiter } from '../../src/stores/redis/index.js';
import { type ManualClock, manualClock } from '../../src/testing/index.js';
import { type RedisServer, startRedis } from '../support/redis-server.js';

// block, unblock, penalty, reward on every store, with exact numbers on a manual clock.

let server: RedisServer;
let redis: Redis;
let prefixes = 0;

beforeAll(async () => {
  server = await startRedis();
  redis = server.connect();
});
afterAll(() => server.stop());

type Store = (algorithm: Algorithm, clock: ManualClock) => Limiter;
const stores: [string, Store][] = [
  ['memory', (algorithm, clock) => createMemoryLimiter({ algorithm, clock: clock.now })],
  [
    'redis',
    (algorithm, clock) =>
      createRedisLimiter({
        client: redis,
        algorithm,
        clock: clock.now,
        prefix: `admin:${++prefixes}:`,
        onWarning: false,
      }),
  ],
  [
    'redis batched',
    (algorithm, clock) =>
      createRedisLimiter({
        client: redis,
        algorithm,
        clock: clock.now,
        prefix: `admin:${++prefixes}:`,
        batch: true,
        onWarning: false,
      }),
  ],
];

const algorithms: [string, () => Algorithm][] = [
  ['gcra', () => gcra({ limit: 5, periodMs: 10_000 })],
  ['token-bucket', () => tokenBucket({ capacity: 5, rate: 5, periodMs: 10_000 })],
  ['fixed-window', () => fixedWindow({ limit: 5, windowMs: 10_000 })],
  ['sliding-window-log', () => slidingWindowLog({ limit: 5, windowMs: 10_000 })],
  ['sliding-window-counter', () => slidingWindowCounter({ limit: 5, windowMs: 10_000 })],
];

describe.each(stores)('admin operations on %s', (_name, store) => {
  describe.each(algorithms)('%s', (_algorithm, algorithm) => {
    it('block denies every request until it ends, with an honest retry, then admits', async () => {
      const clock = manualClock();
      const limiter = store(algorithm(), clock);
      await limiter.block?.('k', 2_000);
      const denied = await limiter.limit('k');
      expect(denied).toMatchObject({ allowed: false, remaining: 0, retryAfterMs: 2_000, reason: 'blocked' });
      // A peek says what the key holds for a request: nothing while blocked, on every store.
      expect(await limiter.peek('k')).toMatchObject({
        allowed: false,
        remaining: 0,
        retryAfterMs: 2_000,
        resetAfterMs: 2_000,
        reason: 'blocked',
      });
      clock.advance(1_999);
      expect(await limiter.limit('k')).toMatchObject({ allowed: false, retryAfterMs: 1, reason: 'blocked' });
      clock.advance(1);
      const admitted = await limiter.limit('k');
      expect(admitted.allowed).toBe(true);
      expect(admitted.reason).toBeUndefined();
      expect(admitted.remaining).toBe(4); // nothing was charged while blocked
    });

    it('a block waits for the algorithm too, and a longer running block is kept', async () => {
      const clock = manualClock();
      const limiter = store(algorithm(), clock);
      await limiter.limit('k', { cost: 5 });
      const exhausted = await limiter.limit('k');
      await limiter.block?.('k', 1_000);
      await limiter.block?.('k', 500);
      const denied = await limiter.limit('k');
      expect(denied).toMatchObject({ allowed: false, reason: 'blocked' });
      expect(denied.retryAfterMs).toBe(Math.max(1_000, exhausted.retryAfterMs));
    });

    it('unblock and reset end a block', async () => {
      const clock = manualClock();
      const limiter = store(algorithm(), clock);
      await limiter.block?.('k', 60_000);
      await limiter.unblock?.('k');
      expect((await limiter.limit('k')).allowed).toBe(true);
      await limiter.block?.('k', 60_000);
      await limiter.reset('k');
      expect(await limiter.limit('k')).toMatchObject({ allowed: true, remaining: 4 });
    });

    it('penalty spends units without an admission; reward gives them back, never past fresh', async () => {
      const clock = manualClock();
      const limiter = store(algorithm(), clock);
      await limiter.penalty?.('k', 3);
      expect((await limiter.peek('k')).remaining).toBe(2);
      await limiter.reward?.('k', 2);
      expect((await limiter.peek('k')).remaining).toBe(4);
      await limiter.reward?.('k', 100);
      expect((await limiter.peek('k')).remaining).toBe(5);
      await limiter.penalty?.('k', 5);
      const denied = await limiter.limit('k');
      expect(denied.allowed).toBe(false);
      expect(denied.reason).toBeUndefined();
    });
  });

  it('sliding-window log: penalty adds entries at now as far as the limit; reward drops the newest', async () => {
    const clock = manualClock();
    const limiter = store(slidingWindowLog({ limit: 5, windowMs: 10_000 }), clock);
    await limiter.limit('k', { cost: 2 }); // two entries at 0
    clock.advance(1_000);
    await limiter.penalty?.('k', 2); // two at 1,000
    expect(await limiter.peek('k')).toMatchObject({ remaining: 1, resetAfterMs: 10_000 });
    clock.advance(1_000);
    await limiter.penalty?.('k', 10); // one at 2,000: the log holds at most the limit
    expect(await limiter.limit('k')).toMatchObject({ allowed: false, remaining: 0, retryAfterMs: 8_000 });
    await limiter.reward?.('k', 1); // the newest, at 2,000, goes
    expect(await limiter.peek('k')).toMatchObject({ remaining: 1, resetAfterMs: 9_000 });
    await limiter.reward?.('k', 2); // then both at 1,000
    expect(await limiter.peek('k')).toMatchObject({ remaining: 3, resetAfterMs: 8_000 });
    await limiter.limit('k', { cost: 3 }); // three at 2,000, in the member of that ms on Redis
    await limiter.reward?.('k', 2); // part of that ms's units
    expect(await limiter.peek('k')).toMatchObject({ remaining: 2, resetAfterMs: 10_000 });
    expect(await limiter.limit('k', { cost: 2 })).toMatchObject({ allowed: true, remaining: 0 });
    clock.advance(8_000); // the two at 0 have left the window
    expect(await limiter.peek('k')).toMatchObject({ remaining: 2, resetAfterMs: 2_000 });
    await limiter.reward?.('k', 100); // never past empty
    expect(await limiter.peek('k')).toMatchObject({ remaining: 5, resetAfterMs: 0 });
    expect(await limiter.limit('k', { cost: 5 })).toMatchObject({ allowed: true, remaining: 0 });
    await limiter.penalty?.('fresh', 3); // a key's first write
    expect((await limiter.peek('fresh')).remaining).toBe(2);
    await limiter.reward?.('fresh', 1); // on Redis, its only member popped and written back smaller
    expect((await limiter.peek('fresh')).remaining).toBe(3);
  });

  it('sliding-window counter: penalty counts the current window up; reward counts it down, then the previous', async () => {
    const clock = manualClock();
    const limiter = store(slidingWindowCounter({ limit: 10, windowMs: 10_000 }), clock);
    await limiter.limit('k', { cost: 6 });
    clock.advance(10_000); // the 6 are the previous window's, weighing 6 at its start
    expect((await limiter.peek('k')).remaining).toBe(4);
    await limiter.penalty?.('k', 3);
    await limiter.penalty?.('k', 5); // 1 more: as far as the limit
    expect(await limiter.limit('k')).toMatchObject({ allowed: false, remaining: 0, retryAfterMs: 1 });
    clock.advance(5_000); // previous 6 weigh ⌊6 × 5/10⌋ = 3, current 4
    expect((await limiter.peek('k')).remaining).toBe(3);
    await limiter.reward?.('k', 5); // current 4 → 0, previous 6 → 5, weighing ⌊2.5⌋ = 2
    expect((await limiter.peek('k')).remaining).toBe(8);
    clock.advance(3_000); // previous 5 weigh ⌊5 × 2/10⌋ = 1
    expect((await limiter.peek('k')).remaining).toBe(9);
    await limiter.reward?.('k', 100); // never below 0: previous 4, weighing 0
    expect(await limiter.peek('k')).toMatchObject({ remaining: 10, resetAfterMs: 0 });
    expect(await limiter.limit('k', { cost: 10 })).toMatchObject({ allowed: true, remaining: 0 });
    await limiter.reward?.('k', 4);
    expect((await limiter.peek('k')).remaining).toBe(4);
    clock.advance(2_000); // the current window's 6 now the previous one's, weighing 6 at its start
    expect((await limiter.peek('k')).remaining).toBe(4);
    await limiter.reward?.('k', 6); // previous 6 → 0: both windows 0, a fresh key
    expect(await limiter.peek('k')).toMatchObject({ remaining: 10, resetAfterMs: 0 });
    expect(await limiter.limit('k', { cost: 10 })).toMatchObject({ allowed: true, remaining: 0 });
  });

  it('bad input rejects with a typed error and writes nothing', async () => {
    const limiter = store(gcra({ limit: 5, periodMs: 10_000 }), manualClock());
    for (const durationMs of [-1, Number.NaN, Number.POSITIVE_INFINITY, '5' as unknown as number]) {
      const error = await limiter.block?.('k', durationMs).catch((caught: unknown) => caught);
      expect(isSluiceError(error, 'ERR_SLUICE_INVALID_DURATION')).toBe(true);
    }
    const error = await limiter.penalty?.('k', -1).catch((caught: unknown) => caught);
    expect(isSluiceError(error, 'ERR_SLUICE_INVALID_COST')).toBe(true);
    const badKey = await limiter.block?.('', 1_000).catch((caught: unknown) => caught);
    expect(isSluiceError(badKey, 'ERR_SLUICE_INVALID_KEY')).toBe(true);
    expect(await limiter.limit('k')).toMatchObject({ allowed: true, remaining: 4 });
  });
});

describe('leased instances over one memory limiter', () => {
  it('hear a reset, a block and a reward at once', async () => {
    const clock = manualClock();
    const remote = createMemoryLimiter({
      algorithm: fixedWindow({ limit: 30, windowMs: 3_600_000 }),
      clock: clock.now,
    });
    const [a, b, c] = [0, 1, 2].map(() =>
      createLeasedLimiter({ remote, leaseSize: 10, clock: clock.now }),
    ) as unknown as [Limiter, Limiter, Limiter];
    const exhaust = async (limiter: Limiter) => {
      while ((await limiter.limit('k')).allowed);
    };
    for (const limiter of [a, b, c]) await exhaust(limiter);
    expect((await b.limit('k')).allowed).toBe(false);
    await a.reset('k');
    expect((await b.limit('k')).allowed).toBe(true);
    expect((await c.limit('k')).allowed).toBe(true);
    await a.block?.('k', 2_000);
    for (const limiter of [b, c]) {
      expect(await limiter.limit('k')).toMatchObject({ allowed: false, retryAfterMs: 2_000, reason: 'blocked' });
    }
    clock.advance(2_000);
    expect((await b.limit('k')).allowed).toBe(true);
    for (const limiter of [a, b, c]) await exhaust(limiter);
    await a.reward?.('k', 5);
    expect((await c.limit('k')).allowed).toBe(true);
  });
});

describe('a sharded limiter', () => {
  it('blocks every shard, spreads a penalty over them and reports invalidations by key', async () => {
    const clock = manualClock();
    const limiter = createShardedLimiter({
      algorithm: gcra({ limit: 8, periodMs: 80_000 }),
      shards: 4,
      create: (algorithm) => createMemoryLimiter({ algorithm, clock: clock.now }),
    });
    const heard: (string | undefined)[] = [];
    limiter.invalidations?.subscribe((key) => heard.push(key));
    await limiter.penalty?.('k', 6);
    expect((await limiter.peek('k')).remaining).toBe(2);
    await limiter.block?.('k', 1_000);
    for (let i = 0; i < 4; i++) expect((await limiter.limit('k')).reason).toBe('blocked');
    expect(heard).toEqual(['k', 'k', 'k', 'k']);
  });
});

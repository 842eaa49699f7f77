import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readCommandStats, roundTripsBetween } from '../../bench/lib/commandstats.mjs';
import { type Reservation, reserve } from '../../src/concurrency/index.js';
import { createLeasedLimiter, createMemoryLimiter, gcra, StoreUnavailableError, tokenBucket } from '../../src/index.js';
import { withFailurePolicy } from '../../src/policy/index.js';
import { createRedisLimiter } from '../../src/stores/redis/index.js';
import { startCluster, type TestCluster } from '../support/cluster.js';
import { useRedisServer } from '../support/redis-server.js';

const redis = useRedisServer({ connections: 2 });
// A frozen client clock: no refill between calls, so remaining is exact.
const frozen = () => 1_700_000_000_000;
let keyCount = 0;
const freshKey = () => `tenant-${++keyCount}`;

describe('reservations on a real redis-server', () => {
  for (const [name, algorithm] of [
    ['GCRA', gcra({ limit: 10_000, periodMs: 60_000 })],
    ['token bucket', tokenBucket({ capacity: 10_000, rate: 10_000, periodMs: 60_000 })],
  ] as const) {
    it(`${name}: estimate 1,000, settle 640 refunds 360; cancel refunds all`, async () => {
      const limiter = createRedisLimiter({ client: redis.redis(0), algorithm, clock: frozen });
      const key = freshKey();
      const answer = await reserve(limiter, key, 1000);
      if (!answer.allowed) throw new Error('expected an admission');
      expect(answer.decision.remaining).toBe(9000);
      await answer.reservation.settle(640);
      expect((await limiter.peek(key)).remaining).toBe(9360);
      const second = await reserve(limiter, key, 1000);
      if (!second.allowed) throw new Error('expected an admission');
      await second.reservation.cancel();
      await second.reservation.cancel();
      expect((await limiter.peek(key)).remaining).toBe(9360);
    });
  }

  for (const [name, algorithm] of [
    ['GCRA', gcra({ limit: 1000, periodMs: 60_000 })],
    ['token bucket', tokenBucket({ capacity: 1000, rate: 1000, periodMs: 60_000 })],
  ] as const) {
    it(`${name}: settling above the estimate charges the debt on Redis exactly as memory does`, async () => {
      const store = createRedisLimiter({ client: redis.redis(0), algorithm, clock: frozen });
      const memory = createMemoryLimiter({ algorithm, clock: frozen, pruneIntervalMs: 0 });
      const key = freshKey();
      for (const limiter of [store, memory]) {
        const answer = await reserve(limiter, key, 1000);
        if (!answer.allowed) throw new Error('expected an admission');
        await answer.reservation.settle(3000); // 2,000 units of debt past empty
      }
      const next = await store.limit(key);
      expect(next.allowed).toBe(false);
      // 2,001 units must drain before one more fits: 2,001 × 60 ms.
      expect(next.retryAfterMs).toBe(2001 * 60);
      expect(next).toEqual(await memory.limit(key));
      // The debt lives as long as it takes to pay: the key's TTL covers it.
      expect(await redis.redis(1).pttl(`sluice:${algorithm.name}:{${key}}`)).toBeGreaterThan(2000 * 60);
    });
  }

  it('charge through leasing and the failure policy reaches Redis; a stalled store rejects it, once', async () => {
    const algorithm = gcra({ limit: 1000, periodMs: 60_000 });
    const store = createRedisLimiter({ client: redis.redis(0), algorithm, clock: frozen });
    const limiter = withFailurePolicy(createLeasedLimiter({ remote: store, leaseSize: 10, clock: frozen }), {
      failure: 'open',
      deadlineMs: 100,
      onDegraded: () => {},
    });
    const key = freshKey();
    const answer = await reserve(limiter, key, 5);
    if (!answer.allowed) throw new Error('expected an admission');
    // The lease took 10 and holds 5: the debt of 500 spends those 5, and 495 go to Redis.
    await answer.reservation.settle(505);
    expect((await store.peek(key)).remaining).toBe(1000 - 10 - 495);
    const late = await reserve(limiter, key, 1); // a new lease of 10: 9 held
    if (!late.allowed) throw new Error('expected an admission');
    expect((await store.peek(key)).remaining).toBe(485);
    redis.server().pause();
    try {
      await expect(late.reservation.settle(100)).rejects.toBeInstanceOf(StoreUnavailableError);
      // Recorded all the same: a retry is not a second charge.
      await expect(late.reservation.settle(100)).rejects.toBeInstanceOf(StoreUnavailableError);
    } finally {
      redis.server().resume();
    }
    // Past the deadline the outcome is unknown to the caller; the script Redis had queued lands
    // once on resume (the policy's late reply), never twice.
    // The debt of 99 spent the 9 held; 90 went to Redis.
    expect((await store.peek(key)).remaining).toBe(485 - 90);
  });

  it('a reservation a failure policy admitted (store unreachable) charged nothing, so settling refunds nothing', async () => {
    const algorithm = gcra({ limit: 10_000, periodMs: 60_000 });
    const store = createRedisLimiter({ client: redis.redis(0), algorithm, clock: frozen });
    const limiter = withFailurePolicy(store, {
      failure: 'open',
      deadlineMs: 100,
      breaker: { failureThreshold: 1, coolDownMs: 60_000 },
      onDegraded: () => {},
    });
    const key = freshKey();
    await limiter.limit(key, { cost: 1000 });
    redis.server().pause();
    try {
      expect((await limiter.limit('opens-the-breaker')).degraded).toBe(true);
    } finally {
      redis.server().resume();
    }
    // The breaker is open: admitted by the policy, Redis untouched. Refunds still reach Redis.
    const answer = await reserve(limiter, key, 1000);
    if (!answer.allowed) throw new Error('expected an admission');
    expect(answer.decision.degraded).toBe(true);
    await answer.reservation.settle(0);
    expect((await store.peek(key)).remaining).toBe(9000);
  });

  it('costs one script call per reserve, one more per settle below or above the estimate (INFO commandstats)', async () => {
    const limiter = createRedisLimiter({
      client: redis.redis(0),
      algorithm: gcra({ limit: 10_000, periodMs: 60_000 }),
    });
    const key = freshKey();
    for (const actual of [0, 2]) {
      const answer = await reserve(limiter, key, 1); // each script cached from here on
      if (answer.allowed) await answer.reservation.settle(actual);
    }
    const admin = redis.redis(1);
    const before = await readCommandStats(admin);
    for (let i = 0; i < 60; i++) {
      const answer = await reserve(limiter, key, 10);
      if (answer.allowed) await answer.reservation.settle([6, 10, 14][i % 3] as number);
    }
    const after = await readCommandStats(admin);
    // 60 reserves; 20 settled below the estimate (a refund each), 20 above (a charge each), 20 at it (no call).
    expect(roundTripsBetween(before, after)).toBe(100);
  });
});

describe('reservations on Redis against memory (property)', () => {
  const steps = fc.array(
    fc.record({
      advanceMs: fc.integer({ min: 0, max: 400 }),
      estimate: fc.integer({ min: 0, max: 30 }),
      settle: fc.option(fc.record({ pick: fc.nat(), actual: fc.integer({ min: 0, max: 60 }) })),
    }),
    { minLength: 1, maxLength: 40 },
  );
  for (const [name, algorithm] of [
    ['GCRA 10 per s, burst 20', gcra({ limit: 10, periodMs: 1000, burst: 20 })],
    ['token bucket 20, 10 per s', tokenBucket({ capacity: 20, rate: 10, periodMs: 1000 })],
  ] as const) {
    it(`${name}: random estimates and actuals decide alike, to the unit`, async () => {
      await fc.assert(
        fc.asyncProperty(steps, async (scenario) => {
          let nowMs = 1_700_000_000_000;
          const clock = () => nowMs;
          const store = createRedisLimiter({ client: redis.redis(0), algorithm, clock });
          const memory = createMemoryLimiter({ algorithm, clock, pruneIntervalMs: 0 });
          const key = freshKey();
          const open: [Reservation, Reservation][] = [];
          for (const step of scenario) {
            nowMs += step.advanceMs;
            if (step.settle && open.length > 0) {
              const pair = open.splice(step.settle.pick % open.length, 1)[0] as [Reservation, Reservation];
              await Promise.all(pair.map((reservation) => reservation.settle(step.settle?.actual ?? 0)));
            }
            const [onRedis, onMemory] = await Promise.all(
              [store, memory].map((limiter) => reserve(limiter, key, step.estimate, { clock, ttlMs: 1_000_000 })),
            );
            expect(onRedis?.decision).toEqual(onMemory?.decision);
            if (onRedis?.allowed && onMemory?.allowed) open.push([onRedis.reservation, onMemory.reservation]);
          }
        }),
        { numRuns: 40 },
      );
    });
  }
});

describe('reservations on a real Redis Cluster', { timeout: 60_000 }, () => {
  let cluster: TestCluster;
  beforeAll(async () => {
    cluster = await startCluster({ masters: 3 });
  }, 60_000);
  afterAll(() => cluster?.stop());

  for (const batch of [false, true]) {
    it(`refunds and debt land on each key's own slot, as on memory (batch: ${batch})`, async () => {
      const algorithm = gcra({ limit: 1000, periodMs: 60_000 });
      const store = createRedisLimiter({ client: cluster.connect(), algorithm, clock: frozen, batch });
      const memory = createMemoryLimiter({ algorithm, clock: frozen, pruneIntervalMs: 0 });
      const keys = Array.from({ length: 12 }, (_, i) => `cluster-tenant-${batch}-${i}`);
      for (const limiter of [store, memory]) {
        await Promise.all(
          keys.map(async (key, i) => {
            const answer = await reserve(limiter, key, 100);
            if (!answer.allowed) throw new Error('expected an admission');
            await answer.reservation.settle(i % 2 === 0 ? 40 : 1500);
          }),
        );
      }
      const after = await Promise.all(keys.map((key) => store.peek(key)));
      expect(after).toEqual(await Promise.all(keys.map((key) => memory.peek(key))));
      expect(after.map((decision) => decision.allowed)).toEqual(keys.map((_, i) => i % 2 === 0));
    });
  }
});

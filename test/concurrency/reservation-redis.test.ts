import { describe, expect, it } from 'vitest';
import { readCommandStats, roundTripsBetween } from '../../bench/lib/commandstats.mjs';
import { reserve } from '../../src/concurrency/index.js';
import { gcra, ReservationError, tokenBucket } from '../../src/index.js';
import { withFailurePolicy } from '../../src/policy/index.js';
import { createRedisLimiter } from '../../src/stores/redis/index.js';
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

  it('settling above the estimate is a ReservationError on Redis (no debt script): the estimate stands', async () => {
    const limiter = createRedisLimiter({
      client: redis.redis(0),
      algorithm: gcra({ limit: 10_000, periodMs: 60_000 }),
      clock: frozen,
    });
    const key = freshKey();
    const answer = await reserve(limiter, key, 1000);
    if (!answer.allowed) throw new Error('expected an admission');
    await expect(answer.reservation.settle(1500)).rejects.toBeInstanceOf(ReservationError);
    expect((await limiter.peek(key)).remaining).toBe(9000);
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

  it('costs one script call per reserve, one more per settle that refunds (INFO commandstats)', async () => {
    const limiter = createRedisLimiter({
      client: redis.redis(0),
      algorithm: gcra({ limit: 10_000, periodMs: 60_000 }),
    });
    const key = freshKey();
    await reserve(limiter, key, 1); // scripts cached from here on
    const refundOnce = await reserve(limiter, key, 1);
    if (refundOnce.allowed) await refundOnce.reservation.settle(0);
    const admin = redis.redis(1);
    const before = await readCommandStats(admin);
    for (let i = 0; i < 50; i++) {
      const answer = await reserve(limiter, key, 10);
      if (answer.allowed) await answer.reservation.settle(i % 2 === 0 ? 6 : 10);
    }
    const after = await readCommandStats(admin);
    // 50 reserves, 25 settlements below the estimate (a refund each), 25 at it (no call).
    expect(roundTripsBetween(before, after)).toBe(75);
  });
});

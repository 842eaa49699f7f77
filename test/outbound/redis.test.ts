import { describe, expect, it } from 'vitest';
import { gcra, InvalidKeyError } from '../../src/index.js';
import { createAcquirer, createRedisPauseStore } from '../../src/outbound/index.js';
import { createRedisLimiter } from '../../src/stores/redis/index.js';
import { useRedisServer } from '../support/redis-server.js';
import { counting, liveTimers } from './support/counting.js';

const redis = useRedisServer({ connections: 2 });

describe('acquire on a real redis-server', () => {
  it('1,000 waiters aborted at random leave no timer, no queue entry and no charged unit', async () => {
    // GCRA, 100 per hour: one unit per 36 s, so during the test peek shows every charge. (A
    // window or log has no refund: there, units admitted for a head aborted mid-call with nobody
    // behind it stay spent; see docs/outbound.md.)
    const algorithm = gcra({ limit: 100, periodMs: 3_600_000 });
    const counted = counting(createRedisLimiter({ client: redis.redis(), algorithm, prefix: 'abort:' }));
    const acquirer = createAcquirer(counted.limiter);
    await counted.limiter.peek('k'); // the script cached, so the first decision is one round trip
    const timers = liveTimers();
    const controllers = Array.from({ length: 1000 }, () => new AbortController());
    const outcomes = controllers.map((controller) =>
      acquirer.acquire('k', { signal: controller.signal }).then(
        () => 'admitted' as const,
        (error: Error) => error.name,
      ),
    );
    // The first 20 are never aborted, so some are admitted however slow the machine; the other 980
    // are aborted at random, some while the head's call is in flight (its units go to the next waiter).
    const aborts = controllers.slice(20).map((controller) => setTimeout(() => controller.abort(), Math.random() * 300));
    const results = await Promise.all(outcomes);
    for (const timer of aborts) clearTimeout(timer);
    const admitted = results.filter((result) => result === 'admitted').length;
    // A call in flight when the last waiter left still lands; its units are then refunded.
    for (let tries = 0; tries < 500 && counted.charged !== admitted; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(results.every((result) => result === 'admitted' || result === 'AbortError')).toBe(true);
    expect(admitted).toBeGreaterThanOrEqual(20);
    expect(acquirer.waiting('k')).toBe(0);
    expect(liveTimers()).toBeLessThanOrEqual(timers);
    expect(counted.charged).toBe(admitted);
    expect((await counted.limiter.peek('k')).remaining).toBe(100 - admitted);
  });

  it('the Redis pause store called directly rejects bad keys with InvalidKeyError and writes nothing', async () => {
    const pauses = createRedisPauseStore({ client: redis.redis(), prefix: 'bad-pause:' });
    for (const key of ['', 'x'.repeat(513), '\ud800', 42, undefined] as unknown as string[]) {
      await expect(pauses.pause(key, 1000)).rejects.toBeInstanceOf(InvalidKeyError);
      await expect(pauses.pausedForMs(key)).rejects.toBeInstanceOf(InvalidKeyError);
    }
    expect(await redis.redis().keys('bad-pause:*')).toEqual([]);
  });

  it('a pause stored in Redis holds another process’s acquirer (its own connection) until it ends', async () => {
    const algorithm = gcra({ limit: 50, periodMs: 1000, burst: 10 });
    const [first, second] = [redis.redis(0), redis.redis(1)].map((client) =>
      createAcquirer(createRedisLimiter({ client, algorithm, prefix: 'pause:' }), {
        pauses: createRedisPauseStore({ client, prefix: 'pause:p:' }),
      }),
    ) as [ReturnType<typeof createAcquirer>, ReturnType<typeof createAcquirer>];
    first.pause('api', 400);
    // The pause is written in the background: wait for it to land rather than for a fixed time.
    let leftMs = -2;
    for (let tries = 0; tries < 200 && leftMs <= 0; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      leftMs = await redis.redis().pttl('pause:p:{api}');
    }
    expect(leftMs).toBeGreaterThan(0);
    await second.acquire('api');
    // Admitted only once the pause key had expired: the other process's acquirer waited it out.
    expect(await redis.redis().pttl('pause:p:{api}')).toBe(-2);
    first.close();
    second.close();
  });
});

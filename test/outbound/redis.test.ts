import { describe, expect, it } from 'vitest';
import { gcra, InvalidKeyError } from '../../src/index.js';
import { createAcquirer, createRedisPauseStore, learnFromUpstream } from '../../src/outbound/index.js';
import { createRedisLimiter } from '../../src/stores/redis/index.js';
import { useRedisServer } from '../support/redis-server.js';
import { counting, liveTimers } from './support/counting.js';

const redis = useRedisServer({ connections: 2 });

/** Resolves once `check` holds, polling every 10 ms (at most 10 s): for effects written in the background. */
async function eventually(check: () => Promise<boolean>): Promise<void> {
  for (let tries = 0; tries < 1000 && !(await check()); tries++) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

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
    // A call in flight when the last waiter left still lands, and its units are then refunded:
    // until both are answered, Redis holds a unit `charged` does not count yet (read then, peek
    // showed one unit fewer remaining: the busy-machine failure, a read too early, not a charge
    // without an admission). So wait for every call to be answered, however slow the machine.
    for (let tries = 0; tries < 1000 && (counted.pending > 0 || counted.charged !== admitted); tries++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(counted.pending).toBe(0);
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

describe('pauses in Redis: capped, inspected and lifted fleet-wide', () => {
  it('a year-9999 Retry-After writes a pause key and a block of at most maxPauseMs, not 7,973 years', async () => {
    const client = redis.redis();
    const limiter = createRedisLimiter({ client, algorithm: gcra({ limit: 10, periodMs: 1000 }), prefix: 'cap:' });
    const acquirer = createAcquirer(limiter, { pauses: createRedisPauseStore({ client, prefix: 'cap:p:' }) });
    learnFromUpstream(acquirer, 'api', { status: 429, headers: { 'retry-after': 'Fri, 31 Dec 9999 23:59:59 GMT' } });
    learnFromUpstream(acquirer, 'epoch', {
      status: 429,
      headers: { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(Date.UTC(5000, 0, 1) / 1000) },
    });
    const keys = ['cap:p:{api}', 'cap:{api}:block', 'cap:p:{epoch}', 'cap:{epoch}:block'];
    await eventually(async () => (await Promise.all(keys.map((key) => client.pttl(key)))).every((ms) => ms > 0));
    for (const key of keys) {
      const ttlMs = await client.pttl(key);
      expect(ttlMs, key).toBeGreaterThan(590_000);
      expect(ttlMs, key).toBeLessThanOrEqual(600_000);
    }
    acquirer.close();
  });

  it('resume on one process lifts the pause and block another process waits on; pauseOf reads them', async () => {
    const algorithm = gcra({ limit: 50, periodMs: 1000, burst: 10 });
    const [first, second] = [redis.redis(0), redis.redis(1)].map((client) =>
      createAcquirer(createRedisLimiter({ client, algorithm, prefix: 'resume:' }), {
        pauses: createRedisPauseStore({ client, prefix: 'resume:p:' }),
      }),
    ) as [ReturnType<typeof createAcquirer>, ReturnType<typeof createAcquirer>];
    // A pause of years left by an older version (written straight into Redis) is honoured as maxPauseMs.
    await redis.redis().set('resume:p:{old}', '1', 'PX', 315_360_000_000);
    expect(await second.pauseOf('old')).toBe(600_000);
    first.pause('api', 3_600_000);
    await eventually(async () => (await redis.redis().pttl('resume:p:{api}')) > 0);
    expect(await second.pauseOf('api')).toBeGreaterThan(590_000);
    const admitted = second.acquire('api');
    const old = second.acquire('old');
    await first.resume('api');
    await first.resume('old');
    // The other process looks again within a second while it has waiters: both are admitted.
    await expect(admitted).resolves.toMatchObject({ allowed: true });
    await expect(old).resolves.toMatchObject({ allowed: true });
    expect(await redis.redis().exists('resume:p:{api}', 'resume:{api}:block', 'resume:p:{old}')).toBe(0);
    expect(await second.pauseOf('api')).toBe(0);
    first.close();
    second.close();
  });
});

import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commandsBetween, readCommandStats, roundTripsBetween } from '../../bench/lib/commandstats.mjs';
import { createConcurrencyLimiter, redisHolds } from '../../src/concurrency/index.js';
import { ConfigError, InvalidKeyError, StoreUnavailableError } from '../../src/index.js';
import { startCluster, type TestCluster } from '../support/cluster.js';
import { freePort, useRedisServer } from '../support/redis-server.js';

const redis = useRedisServer({ connections: 4 });
let keyCount = 0;
const freshKey = () => `key-${++keyCount}`;

function limiterOn(connection: number, options: { limit: number; holdMs: number; heartbeatMs?: number }) {
  return createConcurrencyLimiter({ ...options, store: redisHolds({ client: redis.redis(connection) }) });
}

describe('concurrency limiter on a real redis-server', () => {
  it('grants exactly limit of 1,000 concurrent acquires from 4 connections', async () => {
    const limiters = [0, 1, 2, 3].map((i) => limiterOn(i, { limit: 37, holdMs: 60_000 }));
    const key = freshKey();
    const answers = await Promise.all(
      Array.from({ length: 1000 }, (_, i) => (limiters[i % 4] as (typeof limiters)[0]).acquire(key)),
    );
    expect(answers.filter((answer) => answer.allowed)).toHaveLength(37);
    const admin = redis.redis(0);
    expect(await admin.zcard(`sluice:holds:{${key}}`)).toBe(37);
    const ttl = await admin.pttl(`sluice:holds:{${key}}`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(60_000);
    for (const answer of answers) {
      if (!answer.allowed) expect(answer).toMatchObject({ held: 37, limit: 37 });
      if (!answer.allowed) expect(answer.retryAfterMs).toBeGreaterThan(0);
      if (!answer.allowed) expect(answer.retryAfterMs).toBeLessThanOrEqual(60_000);
    }
  });

  it('release frees the slot at once, idempotently; the last release deletes the key', async () => {
    const limiter = limiterOn(0, { limit: 1, holdMs: 60_000 });
    const key = freshKey();
    const first = await limiter.acquire(key);
    if (!first.allowed) throw new Error('expected a hold');
    expect((await limiter.acquire(key)).allowed).toBe(false);
    await Promise.all([first.hold.release(), first.hold.release()]);
    const second = await limiter.acquire(key);
    expect(second.allowed).toBe(true);
    await first.hold.release();
    expect(await limiter.held(key)).toBe(1);
    await limiter.close();
    expect(await redis.redis(0).exists(`sluice:holds:{${key}}`)).toBe(0);
  });

  it('holds expire after holdMs on the server clock; renew extends; an expired hold cannot be renewed', async () => {
    const limiter = limiterOn(1, { limit: 2, holdMs: 300 });
    const key = freshKey();
    const [a, b] = await Promise.all([limiter.acquire(key), limiter.acquire(key)]);
    if (!a?.allowed || !b?.allowed) throw new Error('expected two holds');
    await sleep(200);
    expect(await a.hold.renew()).toBe(true);
    await sleep(200); // b expired, a renewed 200 ms ago
    expect(await limiter.held(key)).toBe(1);
    expect(await b.hold.renew()).toBe(false);
    expect(b.hold.signal.aborted).toBe(true);
    expect(await redis.redis(1).zscore(`sluice:holds:{${key}}`, b.hold.id)).toBeNull();
    expect((await limiter.acquire(key)).allowed).toBe(true);
    await sleep(350);
    expect(await limiter.held(key)).toBe(0);
    // The key's TTL followed its last hold: nothing is left behind.
    expect(await redis.redis(1).exists(`sluice:holds:{${key}}`)).toBe(0);
  });

  it('heartbeatMs keeps a hold alive across several holdMs', async () => {
    const limiter = limiterOn(2, { limit: 1, holdMs: 200, heartbeatMs: 50 });
    const key = freshKey();
    const acquired = await limiter.acquire(key);
    if (!acquired.allowed) throw new Error('expected a hold');
    await sleep(700);
    expect((await limiter.acquire(key)).allowed).toBe(false);
    await acquired.hold.release();
    expect(await limiter.held(key)).toBe(0);
  });

  it('a hold whose renewals hang for holdMs (Redis SIGSTOPped) aborts its signal', async () => {
    const limiter = limiterOn(2, { limit: 1, holdMs: 300, heartbeatMs: 50 });
    const acquired = await limiter.acquire(freshKey());
    if (!acquired.allowed) throw new Error('expected a hold');
    redis.server().pause();
    try {
      await sleep(450);
      expect(acquired.hold.signal.aborted).toBe(true);
    } finally {
      redis.server().resume();
    }
    await acquired.hold.release();
  });

  it('costs one script call per acquire and one per release (INFO commandstats)', async () => {
    const admin = redis.redis(3);
    const limiter = limiterOn(0, { limit: 5, holdMs: 60_000 });
    const key = freshKey();
    await limiter.acquire(key); // the script is cached from here on
    const before = await readCommandStats(admin);
    for (let i = 0; i < 100; i++) {
      const acquired = await limiter.acquire(key);
      if (acquired.allowed) await acquired.hold.release();
    }
    const after = await readCommandStats(admin);
    expect(roundTripsBetween(before, after)).toBe(200);
    // TIME, ZREMRANGEBYSCORE, ZCARD, ZADD, ZRANGE, PEXPIRE per acquire; TIME, ZREM per release.
    expect(commandsBetween(before, after)).toBe(200 + 100 * 6 + 100 * 2);
  });

  it('rejects bad keys with InvalidKeyError and writes nothing', async () => {
    const limiter = limiterOn(0, { limit: 1, holdMs: 1000 });
    const admin = redis.redis(0);
    const before = await admin.dbsize();
    for (const key of ['', 'x'.repeat(513), 'a\udc00']) {
      await expect(limiter.acquire(key)).rejects.toBeInstanceOf(InvalidKeyError);
    }
    expect(await admin.dbsize()).toBe(before);
  });

  it('the store called directly rejects bad keys with InvalidKeyError and writes nothing', async () => {
    const store = redisHolds({ client: redis.redis(0) });
    const admin = redis.redis(0);
    const before = await admin.dbsize();
    for (const key of ['', 'x'.repeat(513), 'a\udc00', 42, undefined, { id: 'k' }] as unknown as string[]) {
      await expect(store.acquire(key, 'id', 1, 1000)).rejects.toBeInstanceOf(InvalidKeyError);
      await expect(store.renew(key, 'id', 1000)).rejects.toBeInstanceOf(InvalidKeyError);
      await expect(store.release(key, 'id')).rejects.toBeInstanceOf(InvalidKeyError);
      await expect(store.held(key)).rejects.toBeInstanceOf(InvalidKeyError);
    }
    expect(await admin.dbsize()).toBe(before);
  });

  it('rejects with StoreUnavailableError when Redis is unreachable', async () => {
    const client = new Redis({
      port: await freePort(),
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
    });
    client.on('error', () => {});
    const limiter = createConcurrencyLimiter({ limit: 1, holdMs: 1000, store: redisHolds({ client }) });
    await expect(limiter.acquire('k')).rejects.toBeInstanceOf(StoreUnavailableError);
    client.disconnect();
  });

  it('ConfigError naming the option for redisHolds', () => {
    expect(() => redisHolds({ client: {} })).toThrow(ConfigError);
    expect(() => redisHolds({ client: redis.redis(0), prefix: 5 as never })).toThrow(/prefix/);
    expect(() => redisHolds(null as never)).toThrow(/redisHolds options/);
  });
});

describe('concurrency limiter on a real Redis Cluster', { timeout: 60_000 }, () => {
  let cluster: TestCluster;
  beforeAll(async () => {
    cluster = await startCluster({ masters: 3 });
  }, 60_000);
  afterAll(() => cluster?.stop());

  it('grants exactly limit per key across slots, 4 Cluster clients', async () => {
    const limiters = [0, 1, 2, 3].map(() =>
      createConcurrencyLimiter({ limit: 3, holdMs: 60_000, store: redisHolds({ client: cluster.connect() }) }),
    );
    const keys = Array.from({ length: 20 }, (_, i) => `tenant-${i}`);
    const answers = await Promise.all(
      Array.from({ length: 400 }, (_, i) =>
        (limiters[i % 4] as (typeof limiters)[0]).acquire(keys[i % 20] as string).then((a) => [i % 20, a.allowed]),
      ),
    );
    const grantedPerKey = keys.map((_, k) => answers.filter(([key, allowed]) => key === k && allowed).length);
    expect(grantedPerKey).toEqual(keys.map(() => 3));
    await Promise.all(limiters.map((limiter) => limiter.close()));
    expect(await Promise.all(keys.map((key) => (limiters[0] as (typeof limiters)[0]).held(key)))).toEqual(
      keys.map(() => 0),
    );
  });
});

import { afterEach, describe, expect, it } from 'vitest';
import { gcra } from '../../src/algorithms/gcra.js';
import type { Decision } from '../../src/decision.js';
import { withFailurePolicy } from '../../src/policy/index.js';
import { createRedisLimiter } from '../../src/stores/redis/redis-limiter.js';
import { manualClock } from '../http/support/scenarios.js';
import { type RedisServer, startRedis } from '../support/redis-server.js';
import { disconnectAll, resilientClient } from './support/clients.js';

/*
 * The local fallback decides while the store is down. It used to know nothing of blocks: a key
 * blocked fleet-wide (block()) was admitted by the fallback at limit ÷ N. It now honours the
 * blocks this process knows of (issued through it, or met in the store's decisions) until their
 * end; a block made elsewhere and never met here stays unknown to it. Real redis-server,
 * really paused (SIGSTOP) or stopped.
 */

const HOUR = 3_600_000;
const servers: RedisServer[] = [];

afterEach(async () => {
  disconnectAll();
  await Promise.all(servers.splice(0).map((s) => s.stop()));
});

async function server(): Promise<RedisServer> {
  const started = await startRedis();
  servers.push(started);
  return started;
}

/** One instance: its own connection (and `subscriber`), a fallback of limit ÷ 1, the policy on `clock`. */
async function instance(redis: RedisServer, clock: () => number, subscriber?: unknown) {
  const store = createRedisLimiter({
    client: await resilientClient(redis.port),
    subscriber,
    algorithm: gcra({ limit: 10, periodMs: HOUR }),
    prefix: 'fb-blocks:',
    onWarning: false,
  });
  return withFailurePolicy(store, {
    failure: 'fallback',
    fallback: { instances: 1 },
    deadlineMs: 500,
    breaker: { failureThreshold: 1000, coolDownMs: HOUR },
    clock,
    onWarning: false,
  }) as Required<ReturnType<typeof withFailurePolicy>>;
}

const degradedDenial = { allowed: false, degraded: true, failure: 'fallback', reason: 'blocked' };
const allowedOf = (decisions: Decision[]) => decisions.map((decision) => decision.allowed);

describe('local fallback and blocks (real redis-server)', () => {
  it('a block issued through this process holds in the fallback while Redis is SIGSTOPped, until its end', async () => {
    const redis = await server();
    const clock = manualClock();
    const limiter = await instance(redis, clock.read);
    await limiter.block('mallory', 60_000);
    expect(await limiter.limit('mallory')).toMatchObject({ allowed: false, reason: 'blocked' });
    expect((await limiter.limit('mallory')).degraded).toBeUndefined();
    redis.pause();
    try {
      const denied = await limiter.limit('mallory');
      expect(denied).toMatchObject({ ...degradedDenial, degradedReason: 'timeout', remaining: 0 });
      expect(denied.retryAfterMs).toBe(60_000);
      expect(await limiter.peek('mallory')).toMatchObject({ ...degradedDenial, remaining: 0 });
      expect(await limiter.limit('alice')).toMatchObject({ allowed: true, degraded: true, failure: 'fallback' });
      clock.advance(59_999);
      expect(await limiter.limit('mallory')).toMatchObject({ ...degradedDenial, retryAfterMs: 1 });
      clock.advance(1); // the block's end: the fallback admits the key at its local share again
      expect(await limiter.limit('mallory')).toMatchObject({ allowed: true, degraded: true });
    } finally {
      redis.resume();
    }
  });

  it('a block met in a store decision holds on another instance while Redis is stopped; one never met is unknown', async () => {
    const redis = await server();
    const clock = manualClock();
    const [admin, seen, unseen] = [
      await instance(redis, clock.read),
      await instance(redis, clock.read),
      await instance(redis, clock.read),
    ];
    await admin.block('mallory', HOUR);
    const blocked = await seen.limit('mallory');
    expect(blocked).toMatchObject({ allowed: false, reason: 'blocked' });
    expect(blocked.retryAfterMs).toBeGreaterThan(HOUR - 5_000); // on the server's clock, some ms gone
    await redis.stop();
    servers.splice(0);
    const seenNow = await seen.limit('mallory');
    expect(seenNow).toMatchObject({ ...degradedDenial, degradedReason: 'connection' });
    expect(seenNow.retryAfterMs).toBe(blocked.retryAfterMs);
    expect(allowedOf([await seen.limit('alice'), await seen.limit('alice')])).toEqual([true, true]);
    // The documented limit: the block lives in Redis, and this instance never met it.
    expect(await unseen.limit('mallory')).toMatchObject({ allowed: true, degraded: true, failure: 'fallback' });
  });

  it('unblock through this process ends the known block; reset too', async () => {
    const redis = await server();
    const limiter = await instance(redis, manualClock().read);
    await limiter.block('a', HOUR);
    await limiter.block('b', HOUR);
    await limiter.unblock('a');
    await limiter.reset('b');
    redis.pause();
    try {
      expect(allowedOf([await limiter.limit('a'), await limiter.limit('b')])).toEqual([true, true]);
    } finally {
      redis.resume();
    }
  });

  it('an unblock made on another instance, heard through the subscriber, ends the block this one met', async () => {
    const redis = await server();
    const clock = manualClock();
    const admin = await instance(redis, clock.read);
    const subscriber = await resilientClient(redis.port);
    const seen = await instance(redis, clock.read, subscriber);
    await expect.poll(() => seen.invalidations?.live).toBe(true);
    await admin.block('mallory', HOUR);
    expect(await seen.limit('mallory')).toMatchObject({ allowed: false, reason: 'blocked' });
    const heard = new Promise<void>((resolve) =>
      seen.invalidations?.subscribe((key, change) => key === 'mallory' && change === 'unblock' && resolve()),
    );
    await admin.unblock('mallory');
    await heard;
    redis.pause();
    try {
      expect(await seen.limit('mallory')).toMatchObject({ allowed: true, degraded: true, failure: 'fallback' });
    } finally {
      redis.resume();
    }
  });

  it('a block issued while Redis is paused rejects, and still holds in this process', async () => {
    const redis = await server();
    const limiter = await instance(redis, manualClock().read);
    await limiter.limit('warm-up'); // scripts loaded
    redis.pause();
    try {
      await expect(limiter.block('mallory', HOUR)).rejects.toMatchObject({ code: 'ERR_SLUICE_STORE_UNAVAILABLE' });
      expect(await limiter.limit('mallory')).toMatchObject(degradedDenial);
    } finally {
      redis.resume();
    }
  });
});

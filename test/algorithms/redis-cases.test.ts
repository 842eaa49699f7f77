import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Algorithm, type Decision, tokenBucket } from '../../src/index.js';
import { createRedisLimiter, fromIoredis } from '../../src/stores/redis/index.js';
import { runScript } from '../../src/stores/redis/script.js';
import { scripts } from '../../src/stores/redis/scripts/index.js';
import { profiles } from '../../src/testing/profiles.js';
import { type RedisServer, startRedis } from '../support/redis-server.js';
import { freshPrefix, T0 } from './stores.js';

let server: RedisServer;
let redis: Redis;
let connections: Redis[];

beforeAll(async () => {
  server = await startRedis();
  redis = server.connect();
  connections = [0, 1, 2, 3].map(() => server.connect());
});
afterAll(() => server.stop());

/** Decides `costs` for one key in one script call: one atomic step at one millisecond. */
async function batch(algorithm: Algorithm, key: string, atMs: number, costs: number[]): Promise<number[]> {
  const script = scripts[algorithm.name];
  if (!script) throw new Error(`no script for ${algorithm.name}`);
  const args = [String(atMs), ...algorithm.scriptParams, ...costs];
  return (await runScript(
    fromIoredis(redis),
    script,
    costs.map(() => key),
    args,
  )) as number[];
}

/** The same decisions from the pure core, as the memory store makes them. */
function core(algorithm: Algorithm, atMs: number, costs: number[]): number[] {
  const state = new Float64Array(algorithm.slots);
  return costs.flatMap((cost) => {
    const d: Decision = algorithm.decide(state, 0, atMs, cost, true);
    return [
      d.allowed ? 1 : 0,
      d.remaining,
      d.retryAfterMs === Number.POSITIVE_INFINITY ? -1 : d.retryAfterMs,
      d.resetAfterMs,
    ];
  });
}

/** A key's full content and absolute expiry: equal before and after means nothing was written. */
async function snapshot(key: string): Promise<[Buffer | null, number]> {
  return [await redis.dumpBuffer(key), Number(await redis.call('PEXPIRETIME', key))];
}

describe.each(profiles)('Redis $name', (profile) => {
  it('limit 1 per 1 ms: within one millisecond the second request is denied, exactly as in memory', async () => {
    const algorithm = profile.build(1, 1);
    const replies = await batch(algorithm, `${freshPrefix('ms')}{k}`, T0, [1, 1]);
    expect(replies).toEqual(core(algorithm, T0, [1, 1]));
    expect(replies.slice(0, 2)).toEqual([1, 0]);
    expect(replies[4]).toBe(0);
    // Allowed again 1 ms later; the sliding counter 2 ms later (its previous window weighs 1 at its start).
    expect(replies[6]).toBe(profile.name === 'sliding-window-counter' ? 2 : 1);
  });

  it('a denial writes nothing: neither an exhausted key nor a never-possible cost changes state or TTL', async () => {
    const prefix = freshPrefix('deny');
    const l = createRedisLimiter({ client: redis, algorithm: profile.build(5, 60_000), prefix, clock: () => T0 });
    await l.limit('k', { cost: 3 });
    const before = await snapshot(`${prefix}{k}`);
    expect(before[1]).toBeGreaterThan(0);
    expect((await l.limit('k', { cost: 3 })).allowed).toBe(false);
    expect((await l.limit('k', { cost: 1_000_000 })).retryAfterMs).toBe(Number.POSITIVE_INFINITY);
    expect(await l.peek('k')).toMatchObject({ allowed: true, remaining: 2 });
    expect(await snapshot(`${prefix}{k}`)).toEqual(before);
  });

  it('1,000 concurrent calls on one key over 4 connections against limit 5 (server clock)', async () => {
    const prefix = freshPrefix('race');
    const algorithm = profile.build(5, 60_000);
    const limiters = connections.map((client) => createRedisLimiter({ client, algorithm, prefix }));
    const decisions = await Promise.all(
      Array.from({ length: 1000 }, (_, i) => (limiters[i % 4] as (typeof limiters)[number]).limit('hot')),
    );
    const admitted = decisions.filter((d) => d.allowed).length;
    if (profile.name === 'sliding-window-counter') {
      // Documented bound: at most 2 × limit in any window. Here every call falls in the fresh
      // key's first window, where the counter is exact.
      expect(admitted).toBeLessThanOrEqual(2 * 5);
    }
    expect(admitted).toBe(5);
    expect(decisions.every((d) => d.remaining >= 0 && Number.isInteger(d.remaining))).toBe(true);
  });

  it('costs exactly one round trip (one EVALSHA) per decision, denials and peeks included', async () => {
    const admin = server.connect();
    const evalsha = async () => Number(/cmdstat_evalsha:calls=(\d+)/.exec(await admin.info('commandstats'))?.[1] ?? 0);
    const l = createRedisLimiter({ client: redis, algorithm: profile.build(2, 60_000), prefix: freshPrefix('rt') });
    await l.limit('warm');
    const before = await evalsha();
    for (let i = 0; i < 12; i++) await l.limit(`k${i % 3}`);
    await l.peek('k0');
    expect((await evalsha()) - before).toBe(13);
  });

  it('never moves stored time backwards when a client clock does: decides as the memory core does', async () => {
    const algorithm = profile.build(3, 10_000);
    let nowMs = T0;
    const prefix = freshPrefix('back');
    const l = createRedisLimiter({ client: redis, algorithm, prefix, clock: () => nowMs });
    const state = new Float64Array(algorithm.slots);
    for (const [atMs, cost] of [
      [T0, 2],
      [T0 - 5000, 1],
      [T0 - 9000, 1],
      [T0 + 4000, 1],
      [T0 - 1000, 2],
      [T0 + 10_500, 2],
      [T0 + 3000, 1],
    ] as const) {
      nowMs = atMs;
      const expected = algorithm.decide(state, 0, atMs, cost, true);
      expect(await l.limit('k', { cost }), `at ${atMs - T0} cost ${cost}`).toEqual(expected);
      expect(await redis.pttl(`${prefix}{k}`)).toBeLessThanOrEqual(algorithm.horizonMs);
    }
  });
});

describe('Redis token bucket: capacity 5, refill 1 per 10 s', () => {
  it('cost 1,000,000 is denied as never possible and leaves state and TTL unchanged', async () => {
    const prefix = freshPrefix('tb');
    const l = createRedisLimiter({
      client: redis,
      algorithm: tokenBucket({ capacity: 5, rate: 1, periodMs: 10_000 }),
      prefix,
      clock: () => T0,
    });
    await l.limit('k', { cost: 3 });
    await l.limit('k', { cost: 2 });
    const state = await redis.hgetall(`${prefix}{k}`);
    const before = await snapshot(`${prefix}{k}`);
    expect(await l.limit('k', { cost: 1_000_000 })).toEqual({
      allowed: false,
      limit: 5,
      remaining: 0,
      retryAfterMs: Number.POSITIVE_INFINITY,
      resetAfterMs: 50_000,
    });
    expect(await redis.hgetall(`${prefix}{k}`)).toEqual(state);
    expect(await snapshot(`${prefix}{k}`)).toEqual(before);
    // Integers in Redis: the deficit is 5 tokens × 10,000 units, the time in ms.
    expect(state).toEqual({ d: '50000', t: String(T0) });
  });
});

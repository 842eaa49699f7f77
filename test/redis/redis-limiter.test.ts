import { Redis as IORedis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { readCommandStats } from '../../bench/lib/commandstats.mjs';
import { ClockError, ConfigError, gcra, type Limiter } from '../../src/index.js';
import { createRedisLimiter } from '../../src/stores/redis/index.js';
import { profiles } from '../../src/testing/profiles.js';
import { freePort, useRedisServer } from '../support/redis-server.js';

const { server, redis } = useRedisServer({ connections: 2 });
/** A second connection, to read what the limiter's connection wrote. */
const admin = () => redis(1);

let nowMs = 1_700_000_000_000;
let prefixSequence = 0;
function limiter(options: { limit: number; periodMs: number; burst?: number }, clock?: 'server'): Limiter {
  return createRedisLimiter({
    client: redis(),
    algorithm: gcra(options),
    prefix: `t${++prefixSequence}:`,
    clock: clock ?? (() => nowMs),
  });
}

async function evalshaCalls(): Promise<number> {
  const info = await admin().info('commandstats');
  return Number(/cmdstat_evalsha:calls=(\d+)/.exec(info)?.[1] ?? 0);
}

describe('Redis GCRA', () => {
  it('holds the worked case: 5 per 10 s, burst 5', async () => {
    const l = limiter({ limit: 5, periodMs: 10_000 });
    expect(await l.limit('k', { cost: 5 })).toEqual({
      allowed: true,
      limit: 5,
      remaining: 0,
      retryAfterMs: 0,
      resetAfterMs: 10_000,
    });
    nowMs += 1000;
    expect(await l.limit('k', { cost: 5 })).toMatchObject({ allowed: false, retryAfterMs: 9000, remaining: 0 });
    expect((await l.limit('k', { cost: 6 })).retryAfterMs).toBe(Number.POSITIVE_INFINITY);
    nowMs += 9000;
    expect((await l.limit('k', { cost: 5 })).allowed).toBe(true);
  });

  it('decides on the server clock (TIME) by default', async () => {
    const l = limiter({ limit: 5, periodMs: 10_000 }, 'server');
    expect((await l.limit('k', { cost: 5 })).allowed).toBe(true);
    const denied = await l.limit('k');
    expect(denied.allowed).toBe(false);
    expect(denied.retryAfterMs).toBeGreaterThan(0);
    expect(denied.retryAfterMs).toBeLessThanOrEqual(2000);
  });

  it('stores the TAT as an integer in a hash-tagged key', async () => {
    const l = createRedisLimiter({
      client: redis(),
      algorithm: gcra({ limit: 3, periodMs: 1000 }),
      clock: () => nowMs,
    });
    await l.limit('user:42');
    expect(await admin().get('sluice:gcra:{user:42}')).toMatch(/^\d+$/);
  });

  it('sets a TTL on every write and writes nothing on a denial; no key ever has PTTL −1', async () => {
    const prefix = `ttl${++prefixSequence}:`;
    const l = createRedisLimiter({
      client: redis(),
      algorithm: gcra({ limit: 3, periodMs: 3000 }),
      prefix,
      clock: () => nowMs,
    });
    const first = await l.limit('a');
    const ttl = await admin().pttl(`${prefix}{a}`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(first.resetAfterMs);
    await l.limit('b', { cost: 4 }); // never possible: denied, nothing written
    expect(await admin().exists(`${prefix}{b}`)).toBe(0);
    for (let i = 0; i < 50; i++) {
      nowMs += (i * 37) % 700;
      await l.limit(['a', 'b', 'c'][i % 3] as string, { cost: i % 4 });
    }
    const keys = await admin().keys(`${prefix}*`);
    expect(keys.length).toBeGreaterThan(0);
    for (const key of keys) {
      const pttl = await admin().pttl(key);
      expect(pttl).toBeGreaterThan(0);
      expect(pttl).toBeLessThanOrEqual(3000);
    }
  });

  it('treats a planted key without TTL as fresh and leaves it with a TTL', async () => {
    const prefix = `plant${++prefixSequence}:`;
    await admin().set(`${prefix}{k}`, '57');
    const l = createRedisLimiter({
      client: redis(),
      algorithm: gcra({ limit: 5, periodMs: 10_000 }),
      prefix,
      clock: () => nowMs,
    });
    expect(await l.limit('k', { cost: 5 })).toMatchObject({ allowed: true, remaining: 0 });
    expect(await admin().pttl(`${prefix}{k}`)).toBeGreaterThan(0);
  });

  it('treats a planted key without TTL whose TAT is an hour ahead as fresh, on a decision and on a peek', async () => {
    const prefix = `plant${++prefixSequence}:`;
    const hourAheadUs = String((nowMs + 3_600_000) * 1000);
    await admin().set(`${prefix}{k}`, hourAheadUs);
    await admin().set(`${prefix}{p}`, hourAheadUs);
    const l = createRedisLimiter({
      client: redis(),
      algorithm: gcra({ limit: 5, periodMs: 10_000 }),
      prefix,
      clock: () => nowMs,
    });
    expect(await l.limit('k', { cost: 5 })).toMatchObject({ allowed: true, remaining: 0, resetAfterMs: 10_000 });
    expect(await admin().get(`${prefix}{k}`)).toBe(String((nowMs + 10_000) * 1000));
    const pttl = await admin().pttl(`${prefix}{k}`);
    expect(pttl).toBeGreaterThan(9000);
    expect(pttl).toBeLessThanOrEqual(10_000);
    expect(await l.peek('p')).toMatchObject({ allowed: true, remaining: 5, resetAfterMs: 0 });
    expect(await admin().exists(`${prefix}{p}`)).toBe(0);
  });

  it('decides a planted key without TTL whose TAT is within the horizon as state, and gives it a TTL once admitted', async () => {
    const prefix = `plant${++prefixSequence}:`;
    // 5 per 10 s: T = 2 s, horizon 10 s. A TAT 6 s ahead is a state this rule could have written.
    await admin().set(`${prefix}{k}`, String((nowMs + 6000) * 1000));
    const l = createRedisLimiter({
      client: redis(),
      algorithm: gcra({ limit: 5, periodMs: 10_000 }),
      prefix,
      clock: () => nowMs,
    });
    expect(await l.limit('k', { cost: 3 })).toMatchObject({ allowed: false, remaining: 2, retryAfterMs: 2000 });
    expect(await admin().pttl(`${prefix}{k}`)).toBe(-1);
    expect(await l.limit('k', { cost: 2 })).toMatchObject({ allowed: true, remaining: 0, resetAfterMs: 10_000 });
    expect(await admin().get(`${prefix}{k}`)).toBe(String((nowMs + 10_000) * 1000));
    const pttl = await admin().pttl(`${prefix}{k}`);
    expect(pttl).toBeGreaterThan(9000);
    expect(pttl).toBeLessThanOrEqual(10_000);
  });

  it('runs one MGET (its state and its block) per decision of one key, and no PTTL while its TAT is within the horizon', async () => {
    const commandsOf = async (decide: () => Promise<unknown>) => {
      const before = await readCommandStats(admin());
      for (let i = 0; i < 20; i++) await decide();
      const after = await readCommandStats(admin());
      const names = ['evalsha', 'mget', 'get', 'pttl', 'set'];
      return Object.fromEntries(names.map((name) => [name, (after.get(name) ?? 0) - (before.get(name) ?? 0)]));
    };
    // Admitted with the TAT ahead of now (20 of a burst of 25, at one instant), then limited.
    const burst = limiter({ limit: 5, periodMs: 10_000, burst: 25 });
    expect(await commandsOf(() => burst.limit('hot'))).toEqual({ evalsha: 20, mget: 20, get: 0, pttl: 0, set: 20 });
    const l = limiter({ limit: 5, periodMs: 10_000 });
    await l.limit('hot', { cost: 5 });
    expect((await l.limit('hot')).allowed).toBe(false);
    expect(await commandsOf(() => l.limit('hot'))).toEqual({ evalsha: 20, mget: 20, get: 0, pttl: 0, set: 0 });
  });

  it('never moves stored time backwards when the client clock does', async () => {
    const prefix = `back${++prefixSequence}:`;
    const l = createRedisLimiter({
      client: redis(),
      algorithm: gcra({ limit: 5, periodMs: 10_000 }),
      prefix,
      clock: () => nowMs,
    });
    await l.limit('k', { cost: 5 });
    const stored = await admin().get(`${prefix}{k}`);
    nowMs -= 5000;
    const denied = await l.limit('k');
    expect(denied).toMatchObject({ allowed: false, retryAfterMs: 7000 });
    expect(await admin().get(`${prefix}{k}`)).toBe(stored);
    nowMs += 5000;
  });

  it('refuses a client clock reading of NaN, ±Infinity, a negative or an absurd time, writing nothing', async () => {
    for (const profile of profiles) {
      for (const bad of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, -1, 1e300]) {
        let glitch = true;
        const l = createRedisLimiter({
          client: redis(),
          algorithm: profile.build(10, 60_000),
          prefix: `clock${++prefixSequence}:`,
          clock: () => (glitch ? bad : nowMs),
        });
        await expect(l.limit('k'), `${profile.name} ${bad}`).rejects.toThrow(ClockError);
        await expect(l.peek('k')).rejects.toMatchObject({ code: 'ERR_SLUICE_CLOCK' });
        glitch = false;
        let admitted = 0;
        for (let i = 0; i < 100; i++) if ((await l.limit('k')).allowed) admitted++;
        expect(admitted, `${profile.name} after ${bad}`).toBe(10);
      }
    }
  });

  it('costs exactly one round trip per decision', async () => {
    const l = limiter({ limit: 1000, periodMs: 1000 });
    await l.limit('warm');
    const before = await evalshaCalls();
    for (let i = 0; i < 25; i++) await l.limit(`rt:${i % 5}`);
    expect((await evalshaCalls()) - before).toBe(25);
  });

  it('recovers from SCRIPT FLUSH: the next call and 100 concurrent calls all succeed with the right count', async () => {
    const l = limiter({ limit: 100, periodMs: 60_000 });
    expect((await l.limit('flush')).remaining).toBe(99);
    await admin().script('FLUSH');
    expect((await l.limit('flush')).remaining).toBe(98);
    await admin().script('FLUSH');
    const decisions = await Promise.all(Array.from({ length: 100 }, () => l.limit('flush')));
    expect(decisions.filter((d) => d.allowed).length).toBe(98);
    expect(Math.min(...decisions.map((d) => d.remaining))).toBe(0);
  });

  it('recovers after a Redis restart (empty script cache and data)', async () => {
    const l = limiter({ limit: 10, periodMs: 60_000 });
    expect((await l.limit('restart', { cost: 4 })).remaining).toBe(6);
    await server().restart();
    let decision = await l.limit('restart').catch(() => undefined);
    for (let attempt = 0; decision === undefined && attempt < 50; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      decision = await l.limit('restart').catch(() => undefined);
    }
    expect(decision?.remaining).toBe(9);
  });

  it('reset forgets the key', async () => {
    const l = limiter({ limit: 2, periodMs: 60_000 });
    await l.limit('r', { cost: 2 });
    await l.reset('r');
    expect((await l.limit('r', { cost: 2 })).allowed).toBe(true);
  });
});

describe('Redis store failures and bad input', () => {
  it('rejects with StoreUnavailableError when nothing listens', async () => {
    const port = await freePort();
    const dead = new IORedis({
      port,
      host: '127.0.0.1',
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
    });
    dead.on('error', () => {});
    const l = createRedisLimiter({ client: dead, algorithm: gcra({ limit: 1, periodMs: 1000 }) });
    await expect(l.limit('k')).rejects.toMatchObject({ code: 'ERR_SLUICE_STORE_UNAVAILABLE' });
    dead.disconnect();
  });

  it('throws ConfigError for a client that is not one', () => {
    expect(() => createRedisLimiter({ client: {}, algorithm: gcra({ limit: 1, periodMs: 1000 }) })).toThrow(
      ConfigError,
    );
  });

  it('rejects invalid keys and costs without touching Redis', async () => {
    const l = limiter({ limit: 1, periodMs: 1000 });
    const before = await evalshaCalls();
    await expect(l.limit('', {})).rejects.toMatchObject({ code: 'ERR_SLUICE_INVALID_KEY' });
    await expect(l.limit('k', { cost: -1 })).rejects.toMatchObject({ code: 'ERR_SLUICE_INVALID_COST' });
    expect(await evalshaCalls()).toBe(before);
  });
});

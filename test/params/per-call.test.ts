import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Algorithm,
  createMemoryLimiter,
  fixedWindow,
  gcra,
  isSluiceError,
  type Limiter,
  slidingWindowLog,
  tokenBucket,
} from '../../src/index.js';
import { createRedisLimiter, fromIoredis } from '../../src/stores/redis/index.js';
import type { ScriptClient } from '../../src/stores/redis/script.js';
import { freshPrefix, T0 } from '../algorithms/stores.js';
import { held } from '../support/held-keys.js';
import { type RedisServer, startRedis } from '../support/redis-server.js';

let server: RedisServer;
let redis: Redis;
beforeAll(async () => {
  server = await startRedis();
  redis = server.connect();
});
afterAll(() => server.stop());

/** A ScriptClient counting the script calls that reach Redis. */
function counted(client: ScriptClient): { client: ScriptClient; calls: () => number } {
  let calls = 0;
  return {
    client: {
      evalsha: (...args) => {
        calls++;
        return client.evalsha(...args);
      },
      eval: (...args) => {
        calls++;
        return client.eval(...args);
      },
    },
    calls: () => calls,
  };
}

type Build = (algorithm: Algorithm, clock: () => number, client?: ScriptClient) => Limiter;
const stores: [string, Build][] = [
  ['memory', (algorithm, clock) => createMemoryLimiter({ algorithm, clock, pruneIntervalMs: 0 })],
  [
    'redis',
    (algorithm, clock, client) =>
      createRedisLimiter({
        client: client ?? held(redis),
        algorithm,
        prefix: freshPrefix('pc'),
        clock,
        onWarning: false,
      }),
  ],
  [
    'redis batched',
    (algorithm, clock, client) =>
      createRedisLimiter({
        client: client ?? held(redis),
        algorithm,
        prefix: freshPrefix('pc'),
        clock,
        batch: true,
        onWarning: false,
      }),
  ],
];

const invalid: [string, object, RegExp][] = [
  ['a name of another algorithm', { windowMs: 1_000 }, /unknown parameter 'windowMs' for gcra/],
  ['a limit that is not a positive integer', { limit: 0 }, /limit/],
  ['a period that is not an integer', { periodMs: 1.5 }, /periodMs/],
  ['a burst that is null', { burst: null }, /burst/],
  ['a rate finer than 1 unit per µs', { limit: 2_000, periodMs: 1 }, /emission interval below 1 µs/],
];

describe.each(stores)('per-call params, %s', (_store, build) => {
  it('decides each call under its own numbers and reports its own limit', async () => {
    const nowMs = T0;
    const limiter = build(gcra({ limit: 2, periodMs: 1_000 }), () => nowMs);
    const pro = { limit: 10, periodMs: 1_000 };
    const decisions = await Promise.all(Array.from({ length: 11 }, () => limiter.limit('k', { params: pro })));
    expect(decisions.map((d) => d.allowed)).toEqual([...Array(10).fill(true), false]);
    expect(decisions[0]).toMatchObject({ limit: 10, remaining: 9 });
    // The limiter's own numbers still apply to a call without params: the key is spent.
    expect(await limiter.limit('k')).toMatchObject({ allowed: false, limit: 2 });
    expect(await limiter.limit('other')).toMatchObject({ allowed: true, limit: 2, remaining: 1 });
    expect(limiter.algorithmFor?.(pro).limit).toBe(10);
    await limiter.close();
  });

  it('mixed params in one turn are each decided under their own, in arrival order', async () => {
    const nowMs = T0;
    const limiter = build(fixedWindow({ limit: 3, windowMs: 60_000 }), () => nowMs);
    const small = { limit: 3 };
    const large = { limit: 5 };
    const order = [small, large, small, large, large, small, large, small];
    const decisions = await Promise.all(order.map((params) => limiter.limit('mixed', { params })));
    // Counts 1, 2, 3, 4, 5 admitted (each under its own limit), then every call is over both.
    expect(decisions.map((d) => [d.allowed, d.limit, d.remaining])).toEqual([
      [true, 3, 2],
      [true, 5, 3],
      [true, 3, 0],
      [true, 5, 1],
      [true, 5, 0],
      [false, 3, 0],
      [false, 5, 0],
      [false, 3, 0],
    ]);
    await limiter.close();
  });

  it.each(invalid)('rejects %s with InvalidParamsError naming it, writing nothing', async (_case, params, message) => {
    const nowMs = T0;
    const limiter = build(gcra({ limit: 2, periodMs: 1_000 }), () => nowMs);
    const error = await limiter.limit('bad', { cost: 2, params: params as never }).catch((e: unknown) => e);
    expect(isSluiceError(error, 'ERR_SLUICE_INVALID_PARAMS')).toBe(true);
    expect((error as Error).message).toMatch(message);
    expect(await limiter.peek('bad')).toMatchObject({ remaining: 2 });
    await expect(limiter.peek('bad', { params: params as never })).rejects.toThrow(message);
    await limiter.close();
  });

  it('a refund under the params of the units it gives back', async () => {
    const nowMs = T0;
    const limiter = build(tokenBucket({ capacity: 2, rate: 2, periodMs: 1_000 }), () => nowMs);
    const pro = { capacity: 10, rate: 10, periodMs: 1_000 };
    await limiter.limit('r', { cost: 10, params: pro });
    await limiter.refund?.('r', 4, { params: pro });
    expect(await limiter.peek('r', { params: pro })).toMatchObject({ remaining: 4 });
    await limiter.close();
  });

  it('a log written under a larger limit is read whole under a smaller one', async () => {
    let nowMs = T0;
    const limiter = build(slidingWindowLog({ limit: 3, windowMs: 1_000 }), () => nowMs);
    for (let i = 0; i < 7; i++) {
      nowMs = T0 + i;
      expect((await limiter.limit('log', { params: { limit: 7 } })).allowed).toBe(true);
    }
    nowMs = T0 + 1_002; // entries at 0..2 left the window, 4 remain: over 3
    expect(await limiter.limit('log')).toMatchObject({ allowed: false, remaining: 0, retryAfterMs: 2 });
    nowMs = T0 + 1_004;
    expect(await limiter.limit('log')).toMatchObject({ allowed: true, remaining: 0 });
    await limiter.close();
  });
});

describe('per-call params on Redis: round trips', () => {
  it('one script call per decision with params, as without', async () => {
    const { client, calls } = counted(held(fromIoredis(redis)));
    const limiter = createRedisLimiter({
      client,
      algorithm: gcra({ limit: 100, periodMs: 60_000 }),
      prefix: freshPrefix('rt'),
      onWarning: false,
    });
    for (let i = 0; i < 10; i++) await limiter.limit('a', { params: { limit: 1_000 } });
    for (let i = 0; i < 10; i++) await limiter.limit('b');
    expect(calls()).toBe(20);
  });
});

import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Algorithm,
  type AlgorithmParams,
  createLeasedLimiter,
  createMemoryLimiter,
  fixedWindow,
  gcra,
  type LeasedLimiter,
  type Limiter,
} from '../../src/index.js';
import { createRedisLimiter } from '../../src/stores/redis/index.js';
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

type Remote = (algorithm: Algorithm, clock: () => number) => Limiter;
const remotes: [string, Remote][] = [
  ['memory', (algorithm, clock) => createMemoryLimiter({ algorithm, clock, pruneIntervalMs: 0 })],
  [
    'redis',
    (algorithm, clock) =>
      createRedisLimiter({ client: held(redis), algorithm, prefix: freshPrefix('lease'), clock, onWarning: false }),
  ],
];

const free = { limit: 100, periodMs: 60_000 };
const pro = { limit: 1_000, periodMs: 60_000 };

/** Spends one unit at a time on each instance in turn until all deny; how many passed. */
async function drainAll(instances: LeasedLimiter[], key: string, params: AlgorithmParams): Promise<number> {
  let passed = 0;
  const open = new Set(instances);
  while (open.size > 0) {
    for (const instance of [...open]) {
      if ((await instance.limit(key, { params })).allowed) passed++;
      else open.delete(instance);
    }
  }
  return passed;
}

describe.each(remotes)('leasing under per-call params, remote %s', (_remote, build) => {
  it('serves a plan from leases of its own numbers: 100 pro decisions, 10 remote calls', async () => {
    const nowMs = T0;
    const leased = createLeasedLimiter({ remote: build(gcra(free), () => nowMs), leaseSize: 10, clock: () => nowMs });
    for (let i = 0; i < 100; i++) expect((await leased.limit('k', { params: pro })).allowed).toBe(true);
    expect(leased.stats()).toMatchObject({ requests: 100, remoteCalls: 10, localHits: 90 });
    // Past free's limit of 100 only because each call carried pro's numbers.
    expect(await leased.limit('k', { params: pro })).toMatchObject({ allowed: true, limit: 1_000 });
    expect(leased.algorithmFor?.(pro).limit).toBe(1_000);
    await leased.close();
  });

  it('GCRA downgrade: units leased under pro go back at the next free call, so free admits exactly what the remote alone would', async () => {
    const nowMs = T0;
    const remote = build(gcra(free), () => nowMs);
    const [a, b] = [0, 1].map(() => createLeasedLimiter({ remote, leaseSize: 50, clock: () => nowMs })) as [
      LeasedLimiter,
      LeasedLimiter,
    ];
    for (let i = 0; i < 10; i++) {
      await a.limit('user', { params: pro });
      await b.limit('user', { params: pro });
    }
    expect(a.stats().heldUnits + b.stats().heldUnits).toBe(80);
    // 20 pro units spent are 20 × 60 ms = 1.2 s owed: free (600 ms a unit) holds 100 − 2 = 98.
    expect(await drainAll([a, b], 'user', free)).toBe(98);
    expect(a.stats().returnedUnits + b.stats().returnedUnits).toBe(80);
    await remote.close();
  });

  it('fixed window downgrade: units leased under pro are dropped (no refund), denying until the window ends', async () => {
    let nowMs = T0;
    const remote = build(fixedWindow({ limit: 100, windowMs: 60_000 }), () => nowMs);
    const [a, b] = [0, 1].map(() => createLeasedLimiter({ remote, leaseSize: 50, clock: () => nowMs })) as [
      LeasedLimiter,
      LeasedLimiter,
    ];
    const proWindow = { limit: 1_000 };
    for (let i = 0; i < 10; i++) {
      await a.limit('user', { params: proWindow });
      await b.limit('user', { params: proWindow });
    }
    // The remote counted 100 leased, 20 spent: free is over at once, and the 80 held are not served.
    const denied = await a.limit('user', { params: { limit: 100 } });
    expect(denied).toMatchObject({ allowed: false, limit: 100, retryAfterMs: 60_000 });
    expect((await b.limit('user', { params: { limit: 100 } })).allowed).toBe(false);
    expect(a.stats().heldUnits + b.stats().heldUnits).toBe(0);
    nowMs = T0 + 60_000;
    expect(await drainAll([a, b], 'user', { limit: 100 })).toBe(100);
    await remote.close();
  });
});

describe('leasing: a cost-0 read over a smaller limit', () => {
  it('is denied every time, as by the remote alone (property counterexample, leaseSize 1)', async () => {
    const nowMs = T0;
    const remote = createMemoryLimiter({
      algorithm: fixedWindow({ limit: 5, windowMs: 10_000 }),
      clock: () => nowMs,
      pruneIntervalMs: 0,
    });
    const leased = createLeasedLimiter({ remote, leaseSize: 1, clock: () => nowMs });
    expect((await leased.limit('b', { cost: 5, params: { limit: 10 } })).allowed).toBe(true);
    for (let i = 0; i < 2; i++) {
      expect(await leased.limit('b', { cost: 0, params: { limit: 4 } })).toMatchObject({
        allowed: false,
        remaining: 0,
        retryAfterMs: 10_000,
      });
    }
    await leased.close();
  });
});

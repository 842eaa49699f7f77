import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  createLeasedLimiter,
  createMemoryLimiter,
  createShardedLimiter,
  gcra,
  InvalidParamsError,
  type Limiter,
} from '../../src/index.js';
import { instrument } from '../../src/observability/index.js';
import { withFailurePolicy } from '../../src/policy/index.js';
import { createRedisLimiter } from '../../src/stores/redis/index.js';
import { freshPrefix, T0 } from '../algorithms/stores.js';
import { createMeters } from '../observability/support/metrics.js';
import { type RedisServer, startRedis } from '../support/redis-server.js';

let server: RedisServer;
beforeAll(async () => {
  server = await startRedis();
});
afterAll(() => server.stop());

// `peek` and `refund` carry a call's params through every layer of a stack, so that the numbers
// read or given back are the call's own, never the limiter's defaults.

const meters: ReturnType<typeof createMeters>[] = [];
afterEach(async () => {
  await Promise.all(meters.splice(0).map((m) => m.shutdown()));
});

const base = { limit: 10, periodMs: 60_000 };
const pro = { limit: 1_000, periodMs: 60_000 };

type Stack = (remote: Limiter, clock: () => number) => Limiter;
const stacks: [string, Stack][] = [
  ['leased', (remote, clock) => createLeasedLimiter({ remote, leaseSize: 5, clock })],
  ['policy over leased', (remote, clock) => withFailurePolicy(createLeasedLimiter({ remote, leaseSize: 5, clock }))],
  [
    'instrument over policy over leased',
    (remote, clock) => {
      const created = createMeters();
      meters.push(created);
      return instrument(withFailurePolicy(createLeasedLimiter({ remote, leaseSize: 5, clock })), {
        meter: created.meter,
      });
    },
  ],
];

describe.each(stacks)('params through %s', (_name, stack) => {
  it("peek reports the call's numbers for a key held elsewhere", async () => {
    const nowMs = T0;
    const remote = createMemoryLimiter({ algorithm: gcra(base), clock: () => nowMs, pruneIntervalMs: 0 });
    const limiter = stack(remote, () => nowMs);
    for (let i = 0; i < 8; i++) await remote.limit('k', { params: pro });
    // Before (leased): limit 10, remaining 2: the remote was peeked under the limiter's own numbers.
    expect(await limiter.peek('k', { params: pro })).toMatchObject({ allowed: true, limit: 1_000, remaining: 992 });
    await limiter.close();
  });

  it("refund gives units back under the call's numbers", async () => {
    const nowMs = T0;
    const remote = createMemoryLimiter({ algorithm: gcra(base), clock: () => nowMs, pruneIntervalMs: 0 });
    const limiter = stack(remote, () => nowMs);
    for (let i = 0; i < 8; i++) await remote.limit('k', { params: pro });
    await limiter.refund?.('k', 3, { params: pro });
    // 3 pro units (60 ms each) back; under the base numbers (6 s a unit) it would be fresh.
    expect(await remote.peek('k', { params: pro })).toMatchObject({ remaining: 995 });
    await limiter.close();
  });

  it("charge spends debt under the call's numbers", async () => {
    const nowMs = T0;
    const remote = createMemoryLimiter({ algorithm: gcra(base), clock: () => nowMs, pruneIntervalMs: 0 });
    const limiter = stack(remote, () => nowMs);
    for (let i = 0; i < 8; i++) await limiter.limit('k', { params: pro });
    await limiter.charge?.('k', 3, { params: pro });
    // 10 leased (8 spent, 2 held) and 3 owed: the 2 held pay first, 1 goes to the remote, at 60 ms
    // each. Before: charged under the base numbers (6 s each), the remote held 889 for pro.
    expect(await remote.peek('k', { params: pro })).toMatchObject({ remaining: 989 });
    expect(await limiter.peek('k', { params: pro })).toMatchObject({ remaining: 989 });
    await limiter.close();
  });
});

const stores: [string, (clock: () => number) => Limiter][] = [
  ['memory', (clock) => createMemoryLimiter({ algorithm: gcra(base), clock, pruneIntervalMs: 0 })],
  [
    'redis',
    (clock) =>
      createRedisLimiter({ client: server.connect(), algorithm: gcra(base), clock, prefix: freshPrefix('layers') }),
  ],
];

describe.each(stores)('charge under params on the %s store', (_name, build) => {
  it("spends the call's units", async () => {
    const nowMs = T0;
    const store = build(() => nowMs);
    await store.charge?.('k', 3, { params: pro });
    // Before: 3 units of the base numbers (6 s each): pro would hold 700.
    expect(await store.peek('k', { params: pro })).toMatchObject({ remaining: 997 });
    await store.close();
  });
});

describe('params through a sharded limiter', () => {
  it('peek refuses params as limit does: a sub-key holds the limit ÷ shards, never a plan', async () => {
    const limiter = createShardedLimiter({
      algorithm: gcra({ limit: 100, periodMs: 60_000 }),
      shards: 4,
      create: (algorithm) => createMemoryLimiter({ algorithm, pruneIntervalMs: 0 }),
    });
    await expect(limiter.limit('k', { params: pro })).rejects.toBeInstanceOf(InvalidParamsError);
    // Before: resolved with the limiter's own numbers (limit 100), the params dropped.
    await expect(limiter.peek('k', { params: pro })).rejects.toBeInstanceOf(InvalidParamsError);
    await limiter.close();
  });
});

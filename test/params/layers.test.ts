import { afterEach, describe, expect, it } from 'vitest';
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
import { T0 } from '../algorithms/stores.js';
import { createMeters } from '../observability/support/metrics.js';

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

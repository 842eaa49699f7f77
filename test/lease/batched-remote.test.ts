import { describe, expect, it } from 'vitest';
import { readCommandStats, roundTripsBetween } from '../../bench/lib/commandstats.mjs';
import { type Algorithm, createLeasedLimiter, type Decision, gcra, type LeasedLimiter } from '../../src/index.js';
import { createRedisLimiter } from '../../src/stores/redis/index.js';
import { manualClock } from '../../src/testing/index.js';
import { useRedisServer } from '../support/redis-server.js';

// A leased limiter over a `batch: true` Redis limiter: its remote calls are decisions like any
// other, so the batcher groups those of one event-loop turn (64 a script call by default).
// Counted by Redis (INFO commandstats), never timed.

const { redis } = useRedisServer({ connections: 2 });
const HOUR_MS = 3_600_000;
let prefixes = 0;

async function run(algorithm: Algorithm, leaseSize: number, calls: (leased: LeasedLimiter) => Promise<Decision>[]) {
  const clock = manualClock();
  const remote = createRedisLimiter({
    client: redis(0),
    algorithm,
    prefix: `batched:${++prefixes}:`,
    clock: clock.now,
    batch: true,
  });
  await remote.limit('warm-up');
  const leased = createLeasedLimiter({ remote, leaseSize, clock: clock.now });
  const before = await readCommandStats(redis(1));
  const decisions = await Promise.all(calls(leased));
  return {
    admitted: decisions.filter((decision) => decision.allowed).length,
    roundTrips: roundTripsBetween(before, await readCommandStats(redis(1))),
    stats: leased.stats(),
  };
}

describe('leasing over a batched Redis limiter', () => {
  it('a hot key at 1,000 in flight, leasing: one call for all of them, 1 round trip', async () => {
    const hot = await run(gcra({ limit: 10_000, periodMs: HOUR_MS }), 100, (leased) =>
      Array.from({ length: 1000 }, () => leased.limit('hot')),
    );
    expect(hot).toMatchObject({ admitted: 1000, roundTrips: 1, stats: { remoteCalls: 1, passedThrough: 0 } });
  });

  it('200 keys × 5 callers at lease 2: one call per key, the 200 of one turn in 4 round trips', async () => {
    const many = await run(gcra({ limit: 10_000, periodMs: HOUR_MS }), 2, (leased) =>
      Array.from({ length: 1000 }, (_, i) => leased.limit(`key:${i % 200}`)),
    );
    // Each key's 5 callers share one call for max(2, 5) units; the 200 calls share ⌈200 / 64⌉ script calls.
    expect(many).toMatchObject({ admitted: 1000, roundTrips: 4, stats: { remoteCalls: 200, leasedUnits: 1000 } });
  });

  it('passing through at 1e9/hour, lease 100: 1,000 in flight on a hot key, 1 round trip', async () => {
    const passed = await run(gcra({ limit: 1_000_000_000, periodMs: HOUR_MS }), 100, (leased) =>
      Array.from({ length: 1000 }, () => leased.limit('hot')),
    );
    // The first call goes straight to Redis; the 999 behind it queue, and one call asks for
    // exactly their demand: both in the same flush, one script call (the batched limiter alone: 16).
    expect(passed).toMatchObject({
      admitted: 1000,
      roundTrips: 1,
      stats: { passedThrough: 1, leases: 1, leasedUnits: 999 },
    });
  });

  it('passing through over many keys, one caller each: batched as by the Redis limiter alone', async () => {
    const passed = await run(gcra({ limit: 1_000_000_000, periodMs: HOUR_MS }), 100, (leased) =>
      Array.from({ length: 1000 }, (_, i) => leased.limit(`key:${i}`)),
    );
    expect(passed).toMatchObject({ admitted: 1000, roundTrips: 16, stats: { passedThrough: 1000, leases: 0 } });
  });
});

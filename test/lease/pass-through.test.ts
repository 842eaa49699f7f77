import { describe, expect, it } from 'vitest';
import { readCommandStats, roundTripsBetween } from '../../bench/lib/commandstats.mjs';
import { createLeasedLimiter, createMemoryLimiter, type Decision, gcra, type Limiter } from '../../src/index.js';
import { leaseWindowMs } from '../../src/lease/pass-through.js';
import { createRedisLimiter } from '../../src/stores/redis/index.js';
import { type ManualClock, manualClock } from '../../src/testing/index.js';
import { useRedisServer } from '../support/redis-server.js';

// Pass-through: when a lease's units would all expire before a round trip brings them, the leased
// limiter hands calls straight to its remote. Counted (leases, remote calls, Redis round trips), never timed.

const { redis } = useRedisServer({ connections: 2 });
const HOUR_MS = 3_600_000;
let prefixes = 0;

/** A remote whose replies arrive `roundTripMs()` later on the test's clock. */
function slowed(inner: Limiter, clock: ManualClock, roundTripMs: () => number): Limiter {
  return {
    ...inner,
    async limit(key, options) {
      const decision = await inner.limit(key, options);
      clock.advance(roundTripMs());
      return decision;
    },
  };
}

/**
 * The Redis limiter alone and a leased limiter over another Redis limiter, side by side on one
 * clock: 1e9/hour (T = 3.6 µs) with a burst of 50, so a lease of 50 is gone 0.18 ms after it was
 * asked for.
 */
async function sideBySide() {
  const clock = manualClock();
  const algorithm = gcra({ limit: 1_000_000_000, periodMs: HOUR_MS, burst: 50 });
  const plain = createRedisLimiter({ client: redis(0), algorithm, prefix: `plain:${++prefixes}:`, clock: clock.now });
  const remote = createRedisLimiter({ client: redis(0), algorithm, prefix: `leased:${prefixes}:`, clock: clock.now });
  await plain.limit('warm-up');
  return { clock, plain, remote, leased: createLeasedLimiter({ remote, leaseSize: 50, clock: clock.now }) };
}

describe('the lease window', () => {
  it('is leaseSize × T, less what the whole-ms reset of a reply can hide', () => {
    expect(leaseWindowMs(100, 0.0036)).toBe(0); // 1e9/hour, lease 100: reset 1 ms, held back 1 ms
    expect(leaseWindowMs(1000, 0.0036)).toBe(3);
    expect(leaseWindowMs(10, 36_000)).toBe(359_999); // an exact reset: only the 1 ms held back
    expect(leaseWindowMs(1, 0.5)).toBe(0);
  });
});

describe('pass-through at a per-key rate whose leases expire before a round trip', () => {
  it('1e9/hour, lease 50 (0.18 ms of units): every call is one Redis call, decided as by the Redis limiter alone', async () => {
    const { clock, plain, leased } = await sideBySide();
    const costs = [1, 5, 0, 30, 20, 1, 51, 7];
    const expected: Decision[] = [];
    const actual: Decision[] = [];
    const before = await readCommandStats(redis(1));
    for (let round = 0; round < 6; round++) {
      for (const cost of costs) {
        expected.push(await plain.limit('k', { cost }));
        actual.push(await leased.limit('k', { cost }));
      }
      clock.advance(0.05);
    }
    expect(actual).toEqual(expected);
    expect(actual.some((decision) => !decision.allowed)).toBe(true);
    expect(roundTripsBetween(before, await readCommandStats(redis(1)))).toBe(2 * actual.length);
    expect(leased.stats()).toMatchObject({
      leases: 0,
      passedThrough: actual.length,
      remoteCalls: actual.length,
      requests: actual.length,
      localHits: 0,
    });
    expect(leased.tryLimit('k')).toBeUndefined();
    expect(await leased.peek('k')).toEqual(await plain.peek('k'));
    await leased.refund?.('k', 3); // nothing held here: all of it goes to Redis
    await plain.refund?.('k', 3);
    expect(await leased.peek('k')).toEqual(await plain.peek('k'));
    expect(leased.stats()).toMatchObject({ refundedUnits: 0, returns: 0 });
  });

  it('concurrent callers of a key share round trips: the first goes straight, one call asks for the rest', async () => {
    const { plain, remote, leased } = await sideBySide();
    // 80 calls against a burst of 50: both admit exactly 50 and leave the key empty.
    const costs = Array.from({ length: 80 }, () => 1);
    const admittedUnits = (decisions: Decision[]) =>
      decisions.reduce((sum, decision, i) => sum + (decision.allowed ? (costs[i] as number) : 0), 0);
    const expected = await Promise.all(costs.map((cost) => plain.limit('k', { cost })));
    const before = await readCommandStats(redis(1));
    const actual = await Promise.all(costs.map((cost) => leased.limit('k', { cost })));
    const trips = roundTripsBetween(before, await readCommandStats(redis(1)));
    expect(admittedUnits(actual)).toBe(admittedUnits(expected));
    expect(admittedUnits(actual)).toBe(50);
    expect((await remote.peek('k')).remaining).toBe(0);
    // The first straight to Redis; the 79 queued behind it: 50 (the limit) refused, then the 49
    // Redis said it holds; the 30 left refused, then the head's 1 refused and cached, which denies
    // the other 29 here: 5 round trips for 80 calls (the plain limiter: 80).
    expect(trips).toBe(5);
    expect(leased.stats()).toMatchObject({ passedThrough: 1, remoteCalls: 5, leasedUnits: 49, cachedDenials: 29 });
  });

  it('a round trip longer than the window turns leasing into pass-through, and a shorter one back', async () => {
    const clock = manualClock();
    // 1e9/hour, lease 1,000: the window is 3 ms.
    const algorithm = gcra({ limit: 1_000_000_000, periodMs: HOUR_MS });
    let roundTripMs = 5;
    const remote = slowed(
      createMemoryLimiter({ algorithm, clock: clock.now, pruneIntervalMs: 0 }),
      clock,
      () => roundTripMs,
    );
    const leased = createLeasedLimiter({ remote, leaseSize: 1000, clock: clock.now });
    await leased.limit('k'); // no round trip measured yet: it leases, and times the call
    expect(leased.stats()).toMatchObject({ leases: 1, passedThrough: 0, roundTripMs: 5 });
    for (let i = 0; i < 10; i++) expect((await leased.limit('k')).allowed).toBe(true);
    expect(leased.stats()).toMatchObject({ leases: 1, passedThrough: 10 });

    // Round trips of 0 ms: one pass-through call in 16 is timed, and each moves the estimate 1/8 of
    // the way: 5 × (7/8)^4 < 3 after the 4th timed call, the 64th passed through, so the next leases.
    roundTripMs = 0;
    for (let i = 0; i < 54; i++) await leased.limit('k');
    expect(leased.stats()).toMatchObject({ leases: 1, passedThrough: 64 });
    expect(leased.stats().roundTripMs).toBeCloseTo(5 * (7 / 8) ** 4, 9);
    await leased.limit('k');
    expect(leased.stats()).toMatchObject({ leases: 2, passedThrough: 64 });
    expect(leased.tryLimit('k')?.allowed).toBe(true);
  });
});

import { describe, expect, it } from 'vitest';
import { readCommandStats, roundTripsBetween } from '../../bench/lib/commandstats.mjs';
import { type Algorithm, createLeasedLimiter, gcra, type Limiter } from '../../src/index.js';
import { createRedisLimiter } from '../../src/stores/redis/index.js';
import { type ManualClock, manualClock } from '../../src/testing/index.js';
import { useRedisServer } from '../support/redis-server.js';

// Rule 4 on a real redis-server: the requests queued behind a key's lease in flight are served by
// one remote call that asks for all of them. Counted by Redis itself (INFO commandstats), never timed.

const { redis } = useRedisServer({ connections: 2 });
const HOUR_MS = 3_600_000;
let prefixes = 0;

/**
 * The Redis limiter on the test's clock; each call's reply arrives `roundTripMs` later on that
 * clock, and not before `gate` (when given) resolves: callers made meanwhile queue behind it.
 */
function remoteOver(algorithm: Algorithm, clock: ManualClock, roundTripMs: number, gate?: Promise<void>): Limiter {
  const inner = createRedisLimiter({ client: redis(0), algorithm, prefix: `queued:${++prefixes}:`, clock: clock.now });
  return {
    ...inner,
    async limit(key, options) {
      const decision = await inner.limit(key, options);
      await gate;
      clock.advance(roundTripMs);
      return decision;
    },
  };
}

async function roundTripsOf(run: () => Promise<unknown>): Promise<number> {
  const before = await readCommandStats(redis(1));
  await run();
  return roundTripsBetween(before, await readCommandStats(redis(1)));
}

describe('the queue behind a lease in flight is served by one remote call', () => {
  it('1,000 callers arriving while a hot key has a lease in flight (1e9/hour, lease 1,000): one more round trip', async () => {
    // T = 3.6 µs: a lease of 1,000 lasts 3.6 ms, and every reply arrives 5 ms after it was asked
    // for, so no spare unit a lease holds is left to spend when it lands.
    const clock = manualClock();
    let open = () => {};
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    const algorithm = gcra({ limit: 1_000_000_000, periodMs: HOUR_MS });
    const remote = remoteOver(algorithm, clock, 5, gate);
    // The script is loaded (no NOSCRIPT round trip below) by a limiter the gate does not hold.
    await createRedisLimiter({ client: redis(0), algorithm, prefix: 'warm:' }).limit('warm-up');
    const leased = createLeasedLimiter({ remote, leaseSize: 1000, clock: clock.now });
    let decisions: { allowed: boolean }[] = [];
    const trips = await roundTripsOf(async () => {
      const first = leased.limit('hot');
      await new Promise((resolve) => setTimeout(resolve, 20)); // the first call is out, its reply held
      const queued = Array.from({ length: 1000 }, () => leased.limit('hot'));
      open();
      decisions = await Promise.all([first, ...queued]);
    });
    expect(decisions.filter((decision) => decision.allowed)).toHaveLength(1001);
    // The first caller's lease (its spare units gone on arrival), then one call for the 1,000
    // queued behind it, not 1,000 one by one. That reply took 5 ms, longer than a lease of 1,000
    // lasts (3 ms): the queue's call asks for its demand alone (pass-through, docs/leasing.md).
    expect(trips).toBe(2);
    expect(leased.stats()).toMatchObject({ remoteCalls: 2, leases: 2, waited: 1000, leasedUnits: 2000 });
  });

  it('a queue larger than the limit: exactly the limit admitted, in a bounded number of round trips', async () => {
    const clock = manualClock();
    const algorithm = gcra({ limit: 500, periodMs: HOUR_MS });
    const remote = remoteOver(algorithm, clock, 0);
    await remote.limit('warm-up');
    const leased = createLeasedLimiter({ remote, leaseSize: 10, clock: clock.now });
    let admitted = 0;
    const trips = await roundTripsOf(async () => {
      const decisions = await Promise.all(Array.from({ length: 1000 }, () => leased.limit('hot')));
      admitted = decisions.filter((decision) => decision.allowed).length;
    });
    expect(admitted).toBe(500);
    // One call for the first 500 (the limit: more could never be granted at once); the next 500
    // refused, then the head's 1 refused: cached, the other 499 denied here.
    expect(trips).toBe(3);
    expect((await remote.peek('hot')).remaining).toBe(0);
    expect(leased.stats()).toMatchObject({ heldUnits: 0, cachedDenials: 499 });
  });

  it('costs above 1 are summed: 200 concurrent calls of cost 3 on a cold key at lease 5, 1 round trip', async () => {
    const clock = manualClock();
    const remote = remoteOver(gcra({ limit: 10_000, periodMs: HOUR_MS }), clock, 0);
    await remote.limit('warm-up');
    const leased = createLeasedLimiter({ remote, leaseSize: 5, clock: clock.now });
    let decisions: { allowed: boolean; remaining: number }[] = [];
    const trips = await roundTripsOf(async () => {
      decisions = await Promise.all(Array.from({ length: 200 }, () => leased.limit('k', { cost: 3 })));
    });
    expect(decisions.every((decision) => decision.allowed)).toBe(true);
    expect(trips).toBe(1);
    // Each answer is the state after its own spend, in queue order, as one by one.
    expect(decisions.map((decision) => decision.remaining)).toEqual(
      Array.from({ length: 200 }, (_, i) => 10_000 - 3 * (i + 1)),
    );
    expect((await remote.peek('k')).remaining).toBe(10_000 - 600);
  });
});

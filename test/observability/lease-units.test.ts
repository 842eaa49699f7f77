import { describe, expect, it } from 'vitest';
import { createMemoryLimiter, gcra } from '../../src/index.js';
import { createLeasedLimiter } from '../../src/lease/leased-limiter.js';
import type { Limiter } from '../../src/limiter.js';
import { instrument, METRICS, storeMetrics } from '../../src/observability/index.js';
import { createRedisLimiter } from '../../src/stores/redis/redis-limiter.js';
import { scripts } from '../../src/stores/redis/scripts/index.js';
import { refundScripts } from '../../src/stores/redis/scripts/refund.js';
import { manualClock } from '../../src/testing/index.js';
import type { createMeters } from './support/metrics.js';
import { perTest } from './support/per-test.js';
import { scriptCalls } from './support/script-calls.js';

/*
 * Leased units returned (idle, close) and expired unspent, on a manual clock, read through the
 * real SDK: `sluice.lease.units.returned`, `.expired` and the `.held` gauge at each step, over a
 * memory remote and over a real redis-server (whose refunds are `refund` round trips).
 */
const HOUR = 3_600_000;
const T = 36_000; // GCRA 100 per hour: one unit's slot
const owned = perTest();

type Remote = (clock: () => number, metrics: ReturnType<typeof createMeters>) => Promise<Limiter>;

/** redis-server's script calls so far, when the remote is one (a memory remote makes none). */
let serverScriptCalls = async () => 0;

const remotes: [string, Remote][] = [
  ['memory', async (clock) => createMemoryLimiter({ algorithm: gcra({ limit: 100, periodMs: HOUR }), clock })],
  [
    'redis-server',
    async (clock, { meter }) => {
      const redis = await owned.redis();
      const admin = redis.connect();
      // Both scripts cached: no NOSCRIPT reply adds a round trip.
      for (const script of [scripts.gcra, refundScripts.gcra]) await admin.script('LOAD', script?.source as string);
      await admin.config('RESETSTAT');
      serverScriptCalls = () => scriptCalls(admin);
      return createRedisLimiter({
        client: redis.connect(),
        algorithm: gcra({ limit: 100, periodMs: HOUR }),
        clock,
        wrapClient: storeMetrics({ meter, name: 'leased' }),
      });
    },
  ],
];

describe.each(remotes)('leased units on the real SDK, %s remote', (kind, makeRemote) => {
  it('counts units returned on idle and on close, units expired unspent, and units held', async () => {
    const clock = manualClock();
    const metrics = owned.meters();
    const { meter, collect, totalOf } = metrics;
    serverScriptCalls = async () => 0;
    const remote = await makeRemote(clock.now, metrics);
    const leased = instrument(
      createLeasedLimiter({ remote, leaseSize: 10, returnIdleMs: 1000, returnCheckIntervalMs: 0, clock: clock.now }),
      { meter, name: 'leased' },
    );
    // The store's own count: one duration sample per round trip it ran (0 and 0 in memory).
    const units = async () => {
      expect(totalOf(await collect(), METRICS.storeDuration)).toBe(await serverScriptCalls());
      const points = await collect();
      const of = (name: string) => totalOf(points, name, { 'sluice.limit': 'leased' });
      return {
        leased: of(METRICS.leaseUnitsLeased),
        returned: of(METRICS.leaseUnitsReturned),
        expired: of(METRICS.leaseUnitsExpired),
        held: of(METRICS.leaseUnitsHeld),
        refunds: totalOf(points, METRICS.storeDuration, { 'sluice.operation': 'refund' }),
      };
    };

    // One lease of 10 per key: 'a' spends 1, 'b' spends 3.
    await leased.limit('a');
    for (let i = 0; i < 3; i++) await leased.limit('b');
    expect(await units()).toEqual({ leased: 20, returned: 0, expired: 0, held: 16, refunds: 0 });

    // 3 T later the remote has regenerated the first 3 slots of each lease: units whose slot is
    // behind expire ('a' 9 → 6, 'b' 7 → 6).
    clock.advance(3 * T + 1);
    expect(await units()).toEqual({ leased: 20, returned: 0, expired: 4, held: 12, refunds: 0 });

    // 'b' is used again; 'a' idles for returnIdleMs and its 6 units go back to the remote.
    clock.advance(499);
    await leased.limit('b');
    clock.advance(501);
    expect(await leased.returnIdle()).toBe(6);
    expect(await units()).toEqual({ leased: 20, returned: 6, expired: 4, held: 5, refunds: kind === 'memory' ? 0 : 1 });
    expect((await remote.peek('a')).remaining).toBe(100 - 10 + 3 + 6);

    // close() returns the rest: 'b''s 5.
    await leased.close();
    expect(await units()).toEqual({
      leased: 20,
      returned: 11,
      expired: 4,
      held: 0,
      refunds: kind === 'memory' ? 0 : 2,
    });
    expect(leased.stats()).toMatchObject({ leasedUnits: 20, returnedUnits: 11, expiredUnits: 4, heldUnits: 0 });
  });
});

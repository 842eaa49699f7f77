import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createLeasedLimiter, createMemoryLimiter, gcra, type LeasedLimiter } from '../../src/index.js';
import { manualClock } from '../../src/testing/index.js';
import { type RecordingRemote, recordingRemote } from './support/recording-remote.js';

// Fleet-wide, any number of instances, any demand: leases are taken from the remote before they
// are spent and a unit is never spent after its slot in the remote's schedule has passed, so the
// fleet's admissions obey the remote's own GCRA bound, burst + ⌊Δ/T⌋ over every interval Δ.

const fleet = fc.record({
  instances: fc.integer({ min: 1, max: 16 }),
  limit: fc.integer({ min: 1, max: 30 }),
  periodMs: fc.constantFrom(1000, 7001, 60_000),
  burst: fc.integer({ min: 1, max: 30 }),
  leaseSizes: fc.array(fc.integer({ min: 1, max: 30 }), { minLength: 16, maxLength: 16 }),
  steps: fc.array(
    fc.record({
      advanceMs: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 3000 }), fc.integer({ min: 0, max: 60_000 })),
      requests: fc.array(fc.record({ instance: fc.nat(15), cost: fc.integer({ min: 0, max: 3 }) }), { maxLength: 24 }),
    }),
    { minLength: 1, maxLength: 25 },
  ),
});

type Fleet = typeof fleet extends fc.Arbitrary<infer F> ? F : never;

/** Runs the schedule; each step's requests race concurrently on one key. */
async function play(scenario: Fleet, options: { adaptive: boolean; returnIdleMs: number }) {
  const clock = manualClock();
  const algorithm = gcra({ limit: scenario.limit, periodMs: scenario.periodMs, burst: scenario.burst });
  const remote: RecordingRemote = recordingRemote(
    createMemoryLimiter({ algorithm, clock: clock.now, pruneIntervalMs: 0 }),
  );
  const instances: LeasedLimiter[] = Array.from({ length: scenario.instances }, (_, i) =>
    createLeasedLimiter({
      remote,
      leaseSize: Math.min(scenario.leaseSizes[i] as number, scenario.burst),
      clock: clock.now,
      adaptive: options.adaptive,
      returnIdleMs: options.returnIdleMs,
      returnCheckIntervalMs: 0,
      onWarning: false, // the recording remote has no invalidations; nothing is reset or blocked
    }),
  );
  const admissions: { atMs: number; units: number }[] = [];
  for (const step of scenario.steps) {
    clock.advance(step.advanceMs);
    if (options.returnIdleMs > 0) await Promise.all(instances.map((instance) => instance.returnIdle()));
    const atMs = clock.now();
    const decisions = await Promise.all(
      step.requests.map(({ instance, cost }) =>
        (instances[instance % scenario.instances] as LeasedLimiter).limit('k', { cost }),
      ),
    );
    step.requests.forEach(({ cost }, i) => {
      if (decisions[i]?.allowed && cost > 0) admissions.push({ atMs, units: cost });
    });
  }
  // T as the core computes it: periodMs / limit, rounded up to a whole µs.
  const intervalMs = Math.ceil((scenario.periodMs * 1000) / scenario.limit) / 1000;
  const stats = instances.map((instance) => instance.stats());
  return { admissions, intervalMs, remote, stats };
}

/** The largest excess over burst + ⌊Δ/T⌋ across every interval [tᵢ, tⱼ] of the admissions. */
function worstExcess(
  admissions: { atMs: number; units: number }[],
  burst: number,
  intervalMs: number,
  fromStartOnly: boolean,
) {
  const times = [...new Set(admissions.map((a) => a.atMs))].sort((a, b) => a - b);
  const unitsAt = times.map((t) => admissions.filter((a) => a.atMs === t).reduce((sum, a) => sum + a.units, 0));
  let worst = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < (fromStartOnly ? Math.min(1, times.length) : times.length); i++) {
    let units = 0;
    for (let j = i; j < times.length; j++) {
      units += unitsAt[j] as number;
      const bound = burst + Math.floor(((times[j] as number) - (times[i] as number)) / intervalMs);
      worst = Math.max(worst, units - bound);
    }
  }
  return worst;
}

describe('never over-admit, 1..16 instances over one remote', () => {
  it('fleet admissions over every interval Δ ≤ burst + ⌊Δ/T⌋, and every unit is accounted for', async () => {
    await fc.assert(
      fc.asyncProperty(fleet, async (scenario) => {
        const { admissions, intervalMs, remote, stats } = await play(scenario, { adaptive: false, returnIdleMs: 0 });
        expect(worstExcess(admissions, scenario.burst, intervalMs, false)).toBeLessThanOrEqual(0);
        // The remote's own count: what it granted is spent, held, or expired unspent; nothing else.
        const spent = admissions.reduce((sum, a) => sum + a.units, 0);
        const kept = stats.reduce((sum, s) => sum + s.heldUnits + s.expiredUnits, 0);
        expect(spent + kept).toBe(remote.granted());
      }),
      { numRuns: 150 },
    );
  });

  it('with adaptive trims and idle return (refunds): the bound holds from a fresh key, and within the units returned over any interval', async () => {
    await fc.assert(
      fc.asyncProperty(fleet, async (scenario) => {
        const { admissions, intervalMs, remote, stats } = await play(scenario, { adaptive: true, returnIdleMs: 2000 });
        const returned = stats.reduce((sum, s) => sum + s.returnedUnits, 0);
        expect(worstExcess(admissions, scenario.burst, intervalMs, true)).toBeLessThanOrEqual(0);
        expect(worstExcess(admissions, scenario.burst, intervalMs, false)).toBeLessThanOrEqual(returned);
        const spent = admissions.reduce((sum, a) => sum + a.units, 0);
        const kept = stats.reduce((sum, s) => sum + s.heldUnits + s.expiredUnits, 0);
        expect(spent + kept).toBe(remote.granted());
      }),
      { numRuns: 150 },
    );
  });
});

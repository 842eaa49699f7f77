import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type Algorithm,
  ConfigError,
  createMemoryLimiter,
  fixedWindow,
  slidingWindowCounter,
  slidingWindowLog,
  tokenBucket,
} from '../../src/index.js';
import { ALGORITHMS, advanceMs, type Configured, configurations, steps } from './family.js';

const BAD = [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, undefined, '5'] as unknown as number[];

describe('options: typed errors at construction', () => {
  const factories: Record<string, (bad: number) => Algorithm> = {
    'tokenBucket capacity': (bad) => tokenBucket({ capacity: bad, rate: 1, periodMs: 1000 }),
    'tokenBucket rate': (bad) => tokenBucket({ capacity: 1, rate: bad, periodMs: 1000 }),
    'tokenBucket periodMs': (bad) => tokenBucket({ capacity: 1, rate: 1, periodMs: bad }),
    'fixedWindow limit': (bad) => fixedWindow({ limit: bad, windowMs: 1000 }),
    'fixedWindow windowMs': (bad) => fixedWindow({ limit: 1, windowMs: bad }),
    'slidingWindowLog limit': (bad) => slidingWindowLog({ limit: bad, windowMs: 1000 }),
    'slidingWindowLog windowMs': (bad) => slidingWindowLog({ limit: 1, windowMs: bad }),
    'slidingWindowCounter limit': (bad) => slidingWindowCounter({ limit: bad, windowMs: 1000 }),
    'slidingWindowCounter windowMs': (bad) => slidingWindowCounter({ limit: 1, windowMs: bad }),
  };
  for (const [name, create] of Object.entries(factories)) {
    it(`${name}: ${BAD.map(String).join(', ')} throw ConfigError`, () => {
      for (const bad of BAD) expect(() => create(bad), String(bad)).toThrow(ConfigError);
    });
  }

  it('refuses parameters whose integer arithmetic would leave 2^53', () => {
    expect(() => tokenBucket({ capacity: 2 ** 40, rate: 1, periodMs: 2 ** 20 })).toThrow(ConfigError);
    expect(() => slidingWindowCounter({ limit: 2 ** 40, windowMs: 2 ** 20 })).toThrow(ConfigError);
    expect(() => slidingWindowLog({ limit: 1_000_001, windowMs: 1000 })).toThrow(ConfigError);
    // Large but exact: a gcd shrinks the token bucket's units.
    expect(tokenBucket({ capacity: 2 ** 40, rate: 2 ** 20, periodMs: 2 ** 20 }).scriptParams).toEqual([2 ** 40, 1, 1]);
  });
});

/** Replays a schedule on one key's state, returning the state and the time reached. */
function replay(configured: Configured, schedule: readonly { advance: number; cost: number }[]) {
  const { algorithm } = configured;
  const state = new Float64Array(algorithm.slots);
  let nowMs = 0;
  for (const step of schedule) {
    nowMs += advanceMs(step as Parameters<typeof advanceMs>[0], configured.periodMs);
    algorithm.decide(state, 0, nowMs, step.cost, true);
  }
  return { state, nowMs };
}

const probe = fc.record({ laterMs: fc.integer({ min: 0, max: 50_000 }), cost: fc.integer({ min: 0, max: 12 }) });

describe('core contract (random states)', () => {
  for (const name of ALGORITHMS) {
    describe(name, () => {
      it('commit=false and a denial write nothing; an admitted cost c lowers remaining by exactly c', () => {
        fc.assert(
          fc.property(configurations[name], steps, probe, (configured, schedule, { laterMs, cost }) => {
            const { algorithm } = configured;
            const { state, nowMs } = replay(configured, schedule);
            const t = nowMs + (laterMs % (2 * configured.periodMs + 1));
            const before = state.slice();
            const dry = algorithm.decide(state, 0, t, cost, false);
            expect(state).toEqual(before);
            const held = algorithm.decide(state, 0, t, 0, false).remaining;
            const wet = algorithm.decide(state, 0, t, cost, true);
            expect(wet).toEqual(dry);
            if (!wet.allowed) expect(state).toEqual(before);
            else expect(wet.remaining).toBe(held - cost);
            expect(wet.remaining).toBeGreaterThanOrEqual(0);
            expect(wet.remaining).toBeLessThanOrEqual(algorithm.limit);
            expect(wet.resetAfterMs).toBeGreaterThanOrEqual(0);
          }),
          { numRuns: 200 },
        );
      });

      it('retryAfterMs is exact: denied 1 ms before, admitted at it', () => {
        fc.assert(
          fc.property(configurations[name], steps, probe, (configured, schedule, { cost }) => {
            const { algorithm } = configured;
            const { state, nowMs } = replay(configured, schedule);
            const denied = algorithm.decide(state, 0, nowMs, cost, false);
            if (denied.allowed || denied.retryAfterMs === Number.POSITIVE_INFINITY) return;
            const wait = denied.retryAfterMs;
            expect(algorithm.decide(state, 0, nowMs + wait - 1, cost, false)).toMatchObject({
              allowed: false,
              retryAfterMs: 1,
            });
            expect(algorithm.decide(state, 0, nowMs + wait, cost, false).allowed).toBe(true);
          }),
          { numRuns: 300 },
        );
      });

      it('from freshAtMs on, the state decides exactly as a fresh key (so the memory store may drop it)', () => {
        fc.assert(
          fc.property(configurations[name], steps, probe, (configured, schedule, { laterMs, cost }) => {
            const { algorithm } = configured;
            const { state, nowMs } = replay(configured, schedule);
            const freshAt = algorithm.freshAtMs(state, 0);
            expect(freshAt).toBeLessThanOrEqual(nowMs + algorithm.horizonMs);
            const t = freshAt + laterMs;
            const fresh = new Float64Array(algorithm.slots);
            expect(algorithm.decide(state, 0, t, cost, false)).toEqual(algorithm.decide(fresh, 0, t, cost, false));
          }),
          { numRuns: 200 },
        );
      });
    });
  }
});

/** Admitted (time, cost) pairs from hammering one key on the memory store. */
function hammer(algorithm: Algorithm, gaps: readonly number[], costs: readonly number[]) {
  let nowMs = 0;
  const limiter = createMemoryLimiter({ algorithm, clock: () => nowMs, pruneIntervalMs: 0 });
  const admitted: { atMs: number; cost: number }[] = [];
  gaps.forEach((gap, i) => {
    nowMs += gap;
    const cost = costs[i % costs.length] as number;
    if (limiter.limitSync('k', { cost }).allowed && cost > 0) admitted.push({ atMs: nowMs, cost });
  });
  return admitted;
}

/** The most units admitted in any interval [a, b] of admitted times, against `bound(b − a)`. */
function worstOver(admitted: { atMs: number; cost: number }[], bound: (spanMs: number) => number): number {
  let worst = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < admitted.length; i++) {
    let units = 0;
    for (let j = i; j < admitted.length; j++) {
      units += (admitted[j] as { cost: number }).cost;
      const span = (admitted[j] as { atMs: number }).atMs - (admitted[i] as { atMs: number }).atMs;
      worst = Math.max(worst, units - bound(span));
    }
  }
  return worst;
}

describe('documented admission bounds (random traffic, memory store)', () => {
  const traffic = fc.record({
    limit: fc.integer({ min: 1, max: 8 }),
    windowMs: fc.constantFrom(10, 97, 1000),
    gaps: fc.array(fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 40 }), fc.integer({ min: 0, max: 400 })), {
      minLength: 20,
      maxLength: 150,
    }),
    costs: fc.array(fc.integer({ min: 1, max: 3 }), { minLength: 1, maxLength: 5 }),
  });

  it('token bucket: at most capacity + ⌊Δ · rate / periodMs⌋ over any Δ', () => {
    fc.assert(
      fc.property(traffic, fc.integer({ min: 1, max: 5 }), ({ limit, windowMs, gaps, costs }, rate) => {
        const admitted = hammer(tokenBucket({ capacity: limit, rate, periodMs: windowMs }), gaps, costs);
        expect(worstOver(admitted, (span) => limit + Math.floor((span * rate) / windowMs))).toBeLessThanOrEqual(0);
      }),
      { numRuns: 150 },
    );
  });

  it('fixed window: at most 2 × limit − 1 within any windowMs', () => {
    fc.assert(
      fc.property(traffic, ({ limit, windowMs, gaps, costs }) => {
        const admitted = hammer(fixedWindow({ limit, windowMs }), gaps, costs);
        expect(
          worstOver(admitted, (span) => (span < windowMs ? 2 * limit - 1 : Number.POSITIVE_INFINITY)),
        ).toBeLessThanOrEqual(0);
      }),
      { numRuns: 150 },
    );
  });

  it('sliding window log: at most limit within any windowMs', () => {
    fc.assert(
      fc.property(traffic, ({ limit, windowMs, gaps, costs }) => {
        const admitted = hammer(slidingWindowLog({ limit, windowMs }), gaps, costs);
        expect(worstOver(admitted, (span) => (span < windowMs ? limit : Number.POSITIVE_INFINITY))).toBeLessThanOrEqual(
          0,
        );
      }),
      { numRuns: 150 },
    );
  });

  it('sliding window counter: at most 2 × limit within any windowMs', () => {
    fc.assert(
      fc.property(traffic, ({ limit, windowMs, gaps, costs }) => {
        const admitted = hammer(slidingWindowCounter({ limit, windowMs }), gaps, costs);
        expect(
          worstOver(admitted, (span) => (span < windowMs ? 2 * limit : Number.POSITIVE_INFINITY)),
        ).toBeLessThanOrEqual(0);
      }),
      { numRuns: 150 },
    );
  });
});

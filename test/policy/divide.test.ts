import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { divideAlgorithm } from '../../src/algorithms/divide.js';
import { fixedWindow } from '../../src/algorithms/fixed-window.js';
import { gcra } from '../../src/algorithms/gcra.js';
import { slidingWindowCounter } from '../../src/algorithms/sliding-window-counter.js';
import { slidingWindowLog } from '../../src/algorithms/sliding-window-log.js';
import { tokenBucket } from '../../src/algorithms/token-bucket.js';
import type { Algorithm } from '../../src/algorithms/types.js';
import { ConfigError } from '../../src/errors.js';
import { createMemoryLimiter } from '../../src/stores/memory/memory-limiter.js';
import { manualClock } from '../../src/testing/index.js';

describe('divideAlgorithm', () => {
  it('GCRA 90 per hour ÷ 3: burst 30, emission interval × 3', () => {
    const primary = gcra({ limit: 90, periodMs: 3_600_000 });
    const share = divideAlgorithm(primary, 3);
    expect(share.name).toBe('gcra');
    expect(share.limit).toBe(30);
    expect(share.scriptParams).toEqual([120_000_000, 30]);
  });

  it('a fresh key of the share admits exactly burst ÷ N, then one more per N emission intervals', () => {
    const clock = manualClock();
    const limiter = createMemoryLimiter({
      algorithm: divideAlgorithm(gcra({ limit: 90, periodMs: 90_000 }), 3),
      clock: clock.now,
    });
    let admitted = 0;
    for (let i = 0; i < 40; i++) if (limiter.limitSync('k').allowed) admitted++;
    expect(admitted).toBe(30);
    clock.advance(2999);
    expect(limiter.limitSync('k').allowed).toBe(false);
    clock.advance(1);
    expect(limiter.limitSync('k').allowed).toBe(true);
  });

  it('keeps a non-whole-millisecond emission interval exact (100 per 3 s ÷ 7)', () => {
    const primary = gcra({ limit: 100, periodMs: 3000 }); // T = 30,000 µs
    expect(divideAlgorithm(primary, 7).scriptParams).toEqual([210_000, 14]);
    const odd = gcra({ limit: 3, periodMs: 1000 }); // T = 333,334 µs
    expect(divideAlgorithm(odd, 2).scriptParams).toEqual([666_668, 1]);
  });

  it('instances 1 is the algorithm itself; a burst below N still gives every instance 1', () => {
    const primary = gcra({ limit: 2, periodMs: 1000 });
    expect(divideAlgorithm(primary, 1)).toBe(primary);
    expect(divideAlgorithm(primary, 5).limit).toBe(1);
  });

  it('rejects invalid counts and an algorithm without divide() with ConfigError', () => {
    const primary = gcra({ limit: 10, periodMs: 1000 });
    expect(() => divideAlgorithm(primary, 0)).toThrow(ConfigError);
    expect(() => divideAlgorithm(primary, 1.5)).toThrow(ConfigError);
    // A user's own algorithm that does not say how to divide it.
    const other = { ...primary, name: 'leaky-bucket', divide: undefined } as unknown as Algorithm;
    expect(() => divideAlgorithm(other, 2)).toThrow(/no local fallback for algorithm 'leaky-bucket'/);
  });

  // Limit 90 per minute ÷ 3: a fresh key of each share admits exactly 30; once the original
  // would be fresh again (one period; two windows for the sliding counter), 30 again.
  const family: [string, Algorithm, number][] = [
    ['gcra', gcra({ limit: 90, periodMs: 60_000 }), 60_000],
    ['token-bucket', tokenBucket({ capacity: 90, rate: 90, periodMs: 60_000 }), 60_000],
    ['fixed-window', fixedWindow({ limit: 90, windowMs: 60_000 }), 60_000],
    ['sliding-window-log', slidingWindowLog({ limit: 90, windowMs: 60_000 }), 60_000],
    ['sliding-window-counter', slidingWindowCounter({ limit: 90, windowMs: 60_000 }), 120_000],
  ];
  for (const [name, primary, freshAfterMs] of family) {
    it(`${name} 90 per minute ÷ 3: each share admits exactly 30 from fresh, and 30 again a period later`, () => {
      const share = divideAlgorithm(primary, 3);
      expect(share.name).toBe(primary.name);
      expect(share.limit).toBe(30);
      const clock = manualClock(0);
      const limiter = createMemoryLimiter({ algorithm: share, clock: clock.now, pruneIntervalMs: 0 });
      const admitted = () => {
        let count = 0;
        for (let i = 0; i < 50; i++) if (limiter.limitSync('k').allowed) count++;
        return count;
      };
      expect(admitted()).toBe(30);
      clock.advance(freshAfterMs + 1); // + 1: GCRA rounds 60 s ÷ 90 up to 666,667 µs
      expect(admitted()).toBe(30);
    });
  }

  it('token bucket ÷ 3 refills at a third of the rate: 90 per minute → one token per 2 s', () => {
    const share = divideAlgorithm(tokenBucket({ capacity: 90, rate: 90, periodMs: 60_000 }), 3);
    const clock = manualClock(0);
    const limiter = createMemoryLimiter({ algorithm: share, clock: clock.now, pruneIntervalMs: 0 });
    expect(limiter.limitSync('k', { cost: 30 }).allowed).toBe(true);
    clock.advance(1999);
    expect(limiter.limitSync('k').allowed).toBe(false);
    clock.advance(1);
    expect(limiter.limitSync('k').allowed).toBe(true);
  });

  it('property: N shares deciding alone never admit more than max(burst, N) + ⌊Δ/T⌋ together', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 50 }),
        fc.integer({ min: 1, max: 10_000 }),
        fc.integer({ min: 1, max: 16 }),
        fc.array(fc.tuple(fc.nat(15), fc.integer({ min: 0, max: 2000 }), fc.integer({ min: 1, max: 4 })), {
          maxLength: 200,
        }),
        (limit, periodMs, n, schedule) => {
          const primary = gcra({ limit, periodMs });
          const [intervalUs] = primary.scriptParams as [number];
          const clock = manualClock();
          const start = clock.now();
          const fleet = Array.from({ length: n }, () =>
            createMemoryLimiter({ algorithm: divideAlgorithm(primary, n), clock: clock.now, pruneIntervalMs: 0 }),
          );
          let admitted = 0;
          for (const [instance, waitMs, cost] of schedule) {
            clock.advance(waitMs);
            if (fleet[instance % n]?.limitSync('k', { cost }).allowed) admitted += cost;
            const elapsedUs = (clock.now() - start) * 1000;
            expect(admitted).toBeLessThanOrEqual(Math.max(limit, n) + Math.floor(elapsedUs / intervalUs));
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});

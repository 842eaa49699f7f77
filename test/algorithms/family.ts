import fc from 'fast-check';
import {
  type Algorithm,
  fixedWindow,
  gcra,
  slidingWindowCounter,
  slidingWindowLog,
  tokenBucket,
} from '../../src/index.js';
import { fixedWindowReference } from '../../src/testing/reference/fixed-window.js';
import { gcraReference } from '../../src/testing/reference/gcra.js';
import { slidingWindowCounterReference } from '../../src/testing/reference/sliding-window-counter.js';
import { slidingWindowLogReference } from '../../src/testing/reference/sliding-window-log.js';
import { tokenBucketReference } from '../../src/testing/reference/token-bucket.js';
import type { ReferenceModel } from '../../src/testing/reference/types.js';

/** One algorithm under test with random parameters: its core and its reference model. */
export interface Configured {
  readonly label: string;
  readonly algorithm: Algorithm;
  readonly model: () => ReferenceModel;
  /** A time span (ms) over which the state matters: schedules step across a few of these. */
  readonly periodMs: number;
}

// Periods chosen to make rounding bite: primes, 1 ms, and a round one.
const periodMs = fc.constantFrom(1, 7, 997, 2500, 10_000, 86_400_000);
const small = fc.oneof(fc.integer({ min: 1, max: 6 }), fc.integer({ min: 7, max: 40 }));

/** Random parameters for each of the five algorithms. */
export const configurations: Record<Algorithm['name'], fc.Arbitrary<Configured>> = {
  gcra: fc.record({ limit: small, periodMs, burst: small }).map((o) => ({
    label: `gcra ${JSON.stringify(o)}`,
    algorithm: gcra(o),
    model: () => gcraReference(o.limit, o.periodMs, o.burst),
    periodMs: o.periodMs,
  })),
  'token-bucket': fc.record({ capacity: small, rate: fc.integer({ min: 1, max: 9 }), periodMs }).map((o) => ({
    label: `token-bucket ${JSON.stringify(o)}`,
    algorithm: tokenBucket(o),
    model: () => tokenBucketReference(o),
    periodMs: o.periodMs,
  })),
  'fixed-window': fc.record({ limit: small, windowMs: periodMs }).map((o) => ({
    label: `fixed-window ${JSON.stringify(o)}`,
    algorithm: fixedWindow(o),
    model: () => fixedWindowReference(o),
    periodMs: o.windowMs,
  })),
  'sliding-window-log': fc.record({ limit: small, windowMs: periodMs }).map((o) => ({
    label: `sliding-window-log ${JSON.stringify(o)}`,
    algorithm: slidingWindowLog(o),
    model: () => slidingWindowLogReference(o),
    periodMs: o.windowMs,
  })),
  'sliding-window-counter': fc.record({ limit: small, windowMs: periodMs }).map((o) => ({
    label: `sliding-window-counter ${JSON.stringify(o)}`,
    algorithm: slidingWindowCounter(o),
    model: () => slidingWindowCounterReference(o),
    periodMs: o.windowMs,
  })),
};

export interface Step {
  /** Fraction of the period to move the clock by (0 often: many requests share a millisecond). */
  readonly advance: number;
  readonly key: 'a' | 'b' | 'c';
  readonly cost: number;
}

export const steps = fc.array(
  fc.record({
    advance: fc.oneof(
      fc.constant(0),
      fc.double({ min: 0, max: 0.3, noNaN: true }),
      fc.double({ min: 0, max: 2.5, noNaN: true }),
    ),
    key: fc.constantFrom('a' as const, 'b' as const, 'c' as const),
    cost: fc.oneof(fc.constant(1), fc.integer({ min: 0, max: 3 }), fc.integer({ min: 0, max: 12 })),
  }),
  { minLength: 10, maxLength: 60 },
);

/** Milliseconds to advance for a step (whole ms, as stores see time). */
export const advanceMs = (step: Step, period: number): number => Math.floor(step.advance * period);

export const ALGORITHMS = Object.keys(configurations) as Algorithm['name'][];

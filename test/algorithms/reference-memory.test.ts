import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createMemoryLimiter } from '../../src/index.js';
import { ALGORITHMS, advanceMs, configurations, steps } from './family.js';

describe('memory store against the reference models (random schedules)', () => {
  for (const name of ALGORITHMS) {
    it(`${name}: identical decisions, remaining, retryAfterMs and resetAfterMs`, () => {
      fc.assert(
        fc.property(configurations[name], steps, (configured, schedule) => {
          let nowMs = 0;
          const limiter = createMemoryLimiter({
            algorithm: configured.algorithm,
            clock: () => nowMs,
            pruneIntervalMs: 0,
          });
          const model = configured.model();
          for (const step of schedule) {
            nowMs += advanceMs(step, configured.periodMs);
            const expected = model.decide(step.key, nowMs, step.cost);
            expect(limiter.limitSync(step.key, { cost: step.cost }), `${configured.label} at ${nowMs}`).toEqual(
              expected,
            );
          }
        }),
        { numRuns: 300 },
      );
    });
  }
});

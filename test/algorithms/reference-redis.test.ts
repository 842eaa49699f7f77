import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createMemoryLimiter } from '../../src/index.js';
import { createRedisLimiter, fromIoredis } from '../../src/stores/redis/index.js';
import { holdingKeys } from '../support/held-keys.js';
import { useRedisServer } from '../support/redis-server.js';
import { ALGORITHMS, advanceMs, configurations, steps } from './family.js';

const { redis } = useRedisServer();

let run = 0;

describe('Redis store against the memory store and the reference models (random schedules, client clock)', () => {
  for (const name of ALGORITHMS) {
    it(`${name}: identical decisions, remaining, retryAfterMs and resetAfterMs`, async () => {
      await fc.assert(
        fc.asyncProperty(configurations[name], steps, async (configured, schedule) => {
          let nowMs = 1_700_000_000_000;
          const clock = () => nowMs;
          const shared = createRedisLimiter({
            client: holdingKeys(fromIoredis(redis())),
            algorithm: configured.algorithm,
            prefix: `prop${++run}:`,
            clock,
          });
          const local = createMemoryLimiter({ algorithm: configured.algorithm, clock, pruneIntervalMs: 0 });
          const model = configured.model();
          for (const step of schedule) {
            nowMs += advanceMs(step, configured.periodMs);
            const expected = model.decide(step.key, nowMs, step.cost);
            const where = `${configured.label} at ${nowMs}, ${step.key} cost ${step.cost}`;
            expect(await shared.limit(step.key, { cost: step.cost }), `redis: ${where}`).toEqual(expected);
            expect(local.limitSync(step.key, { cost: step.cost }), `memory: ${where}`).toEqual(expected);
          }
        }),
        { numRuns: 40 },
      );
      // 40 schedules of round trips: seconds on a quiet machine, more when the cores are shared.
    }, 120_000);
  }
});

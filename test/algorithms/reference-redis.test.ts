import fc from 'fast-check';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryLimiter } from '../../src/index.js';
import { createRedisLimiter } from '../../src/redis.js';
import { type RedisServer, startRedis } from '../support/redis-server.js';
import { ALGORITHMS, advanceMs, configurations, steps } from './family.js';

let server: RedisServer;
let redis: Redis;

beforeAll(async () => {
  server = await startRedis();
  redis = server.connect();
});
afterAll(() => server.stop());

/*
 * Redis expires keys on its own clock while the limiter decides on the one we pass. A frozen
 * test clock would let a key with 2 ms to live vanish during the test's real milliseconds and
 * look fresh to Redis but not to the model. So the clock here is the schedule's time plus the
 * real time elapsed since the run began: logical time never falls behind Redis's, and the
 * memory store and the model are given exactly the same milliseconds. Periods of 1 and 7 ms
 * stay out of this test (a millisecond of scheduling jitter is their whole period); their Lua
 * paths are checked in one atomic batch in redis-cases.test.ts.
 */
const LONG_PERIOD = (c: { periodMs: number }) => c.periodMs >= 997;

let run = 0;

describe('Redis store against the memory store and the reference models (random schedules, client clock)', () => {
  for (const name of ALGORITHMS) {
    it(`${name}: identical decisions, remaining, retryAfterMs and resetAfterMs`, async () => {
      await fc.assert(
        fc.asyncProperty(configurations[name].filter(LONG_PERIOD), steps, async (configured, schedule) => {
          const startedAt = performance.now();
          const baseMs = 1_700_000_000_000 + Math.floor(Math.random() * 1e9);
          let scheduleMs = 0;
          let nowMs = baseMs;
          const clock = () => nowMs;
          const shared = createRedisLimiter({
            client: redis,
            algorithm: configured.algorithm,
            prefix: `prop${++run}:`,
            clock,
          });
          const local = createMemoryLimiter({ algorithm: configured.algorithm, clock, pruneIntervalMs: 0 });
          const model = configured.model();
          for (const step of schedule) {
            scheduleMs += advanceMs(step, configured.periodMs);
            nowMs = Math.max(nowMs, baseMs + scheduleMs + Math.ceil(performance.now() - startedAt));
            const expected = model.decide(step.key, nowMs, step.cost);
            const where = `${configured.label} at +${nowMs - baseMs} ms, ${step.key} cost ${step.cost}`;
            expect(await shared.limit(step.key, { cost: step.cost }), `redis: ${where}`).toEqual(expected);
            expect(local.limitSync(step.key, { cost: step.cost }), `memory: ${where}`).toEqual(expected);
          }
        }),
        { numRuns: 40 },
      );
    });
  }
});

import fc from 'fast-check';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryLimiter } from '../../src/index.js';
import { createRedisLimiter, defineScript, fromIoredis, runScript, type ScriptClient } from '../../src/redis.js';
import { scripts } from '../../src/stores/redis/scripts/index.js';
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
 * Redis expires keys on its own clock, while these schedules run on a test clock that jumps
 * or stands still: a key written with 1 ms to live at test time t could vanish before the next
 * call at t on Redis's clock, and the comparison would test the machine's load. So the scripts
 * run through a client that appends one step to each production script, after every decision
 * and inside the same script (where Redis's clock stands still): hold each key for an hour.
 * Decisions then rest on the stored times alone, which also checks that each script reads state
 * past its own expiry as fresh (what Redis sees when client clocks run ahead). The TTLs the
 * scripts set are checked in redis-hygiene.test.ts.
 */
const HOLD = "for i = 1, #KEYS do redis.call('PEXPIRE', KEYS[i], 3600000) end\nreturn replies\n";
const held = new Map(
  Object.values(scripts).map((script) => {
    const source = script.source.replace(/return replies\n$/, HOLD);
    if (source === script.source) throw new Error('the script no longer ends with `return replies`');
    return [script.sha, defineScript(source)];
  }),
);
function holding(client: Redis): ScriptClient {
  const redis = fromIoredis(client);
  const heldScript = (sha: string) => {
    const script = held.get(sha);
    if (!script) throw new Error(`unknown script ${sha}`);
    return script;
  };
  return {
    evalsha: (sha, keys, args) => runScript(redis, heldScript(sha), keys, args),
    eval: (source, keys, args) => runScript(redis, heldScript(defineScript(source).sha), keys, args),
  };
}

let run = 0;

describe('Redis store against the memory store and the reference models (random schedules, client clock)', () => {
  for (const name of ALGORITHMS) {
    it(`${name}: identical decisions, remaining, retryAfterMs and resetAfterMs`, async () => {
      await fc.assert(
        fc.asyncProperty(configurations[name], steps, async (configured, schedule) => {
          let nowMs = 1_700_000_000_000;
          const clock = () => nowMs;
          const shared = createRedisLimiter({
            client: holding(redis),
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
    });
  }
});

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createMemoryLimiter, type Decision, gcra, type Limiter, slidingWindowLog } from '../../src/index.js';
import { createRedisLimiter, fromIoredis } from '../../src/stores/redis/index.js';
import { runScript } from '../../src/stores/redis/script.js';
import { costArg, perNodeScript } from '../../src/stores/redis/scripts/compose.js';
import { scripts } from '../../src/stores/redis/scripts/index.js';
import { decidePartially } from '../../src/testing/reference/partial.js';
import { slidingWindowLogReference } from '../../src/testing/reference/sliding-window-log.js';
import { holdingKeys } from '../support/held-keys.js';
import { useRedisServer } from '../support/redis-server.js';
import { ALGORITHMS, advanceMs, configurations, steps } from './family.js';
import { freshPrefix, T0 } from './stores.js';

const { redis } = useRedisServer();

type Store = 'memory' | 'redis' | 'redis, batched';
const STORES: Store[] = ['memory', 'redis', 'redis, batched'];

function create(
  store: Store,
  algorithm: Parameters<typeof createMemoryLimiter>[0]['algorithm'],
  clock: () => number,
): Limiter {
  if (store === 'memory') return createMemoryLimiter({ algorithm, clock, pruneIntervalMs: 0 });
  return createRedisLimiter({
    // Keys held: the test clock jumps and stands still while Redis expires on real time.
    client: holdingKeys(fromIoredis(redis())),
    algorithm,
    prefix: freshPrefix('partial'),
    clock,
    batch: store === 'redis, batched',
  });
}

const partially = (limiter: Limiter, key: string, cost: number) => limiter.limit(key, { cost, partial: true });
const pick = ({ allowed, admitted, remaining, retryAfterMs }: Decision) => ({
  allowed,
  admitted,
  remaining,
  retryAfterMs,
});

describe.each(STORES)("partial admission, redis_rate's AllowAtMost cases (GCRA 10 per s): %s", (store) => {
  it('at most 2 → 2 admitted, 7 left; at most 10 with 7 left → 7; at most 1000 on an empty key → 0, exact retry', async () => {
    let nowMs = T0;
    const limiter = create(store, gcra({ limit: 10, periodMs: 1000 }), () => nowMs);
    expect((await limiter.limit('k')).remaining).toBe(9);
    expect(pick(await partially(limiter, 'k', 2))).toEqual({
      allowed: true,
      admitted: 2,
      remaining: 7,
      retryAfterMs: 0,
    });
    expect((await limiter.limit('k', { cost: 0 })).remaining).toBe(7);
    expect(pick(await partially(limiter, 'k', 10))).toEqual({
      allowed: true,
      admitted: 7,
      remaining: 0,
      retryAfterMs: 0,
    });
    const empty = await partially(limiter, 'k', 1000);
    expect(pick(empty)).toEqual({ allowed: false, admitted: 0, remaining: 0, retryAfterMs: 100 });
    expect(empty.resetAfterMs).toBe(1000);
    nowMs += 99;
    expect(pick(await partially(limiter, 'k', 1000))).toEqual({
      allowed: false,
      admitted: 0,
      remaining: 0,
      retryAfterMs: 1,
    });
    nowMs += 1;
    expect(pick(await partially(limiter, 'k', 1000))).toEqual({
      allowed: true,
      admitted: 1,
      remaining: 0,
      retryAfterMs: 0,
    });
    await limiter.close();
  });

  it('a partial request of cost 0 reports and admits nothing; an ordinary decision carries no `admitted`', async () => {
    const limiter = create(store, gcra({ limit: 10, periodMs: 1000 }), () => T0);
    expect(pick(await partially(limiter, 'k', 0))).toEqual({
      allowed: true,
      admitted: 0,
      remaining: 10,
      retryAfterMs: 0,
    });
    expect(await limiter.limit('k', { cost: 3 })).not.toHaveProperty('admitted');
    expect(await limiter.limit('k', { cost: 30 })).not.toHaveProperty('admitted');
    expect(pick(await partially(limiter, 'k', Number.MAX_SAFE_INTEGER))).toMatchObject({ admitted: 7, remaining: 0 });
    await limiter.close();
  });

  it('a `partial` that is not a boolean rejects with ERR_SLUICE_INVALID_COST and writes nothing', async () => {
    const limiter = create(store, gcra({ limit: 10, periodMs: 1000 }), () => T0);
    for (const partial of ['yes', 1, null]) {
      await expect(limiter.limit('k', { cost: 5, partial: partial as unknown as boolean })).rejects.toMatchObject({
        code: 'ERR_SLUICE_INVALID_COST',
      });
    }
    await expect(partially(limiter, 'k', -1)).rejects.toMatchObject({ code: 'ERR_SLUICE_INVALID_COST' });
    expect((await limiter.peek('k')).remaining).toBe(10);
    await limiter.close();
  });
});

// Schedules the property below failed on, at one instant (sliding window log, windowMs 1): Redis
// had dropped key c, written with a 1 ms TTL, before the next step. They failed only when
// Redis's millisecond ticked inside that write's PEXPIRE; test/redis/held-keys.test.ts makes
// that cause fail every time, and test/support/held-keys.ts fixes it.
const oneInstant: readonly [string, number, readonly (readonly [key: string, cost: number, partial: boolean])[]][] = [
  [
    'limit 8: a 1, 1, 2; b 2, partial 0; c partial 1, then 8',
    8,
    [
      ['a', 1, false],
      ['a', 1, false],
      ['a', 2, false],
      ['b', 2, false],
      ['b', 0, true],
      ['c', 1, true],
      ['c', 8, false],
    ],
  ],
  [
    'limit 22: a partial 0, 1, 2; c partial 9, partial 9',
    22,
    [
      ['a', 0, true],
      ['a', 1, false],
      ['a', 2, false],
      ['c', 9, true],
      ['c', 9, true],
      ['c', 2, false],
    ],
  ],
];

describe.each(STORES)('partial admission, sliding window log of 1 ms, found schedules: %s', (store) => {
  it.each(oneInstant)('%s', async (_, limit, schedule) => {
    const limiter = create(store, slidingWindowLog({ limit, windowMs: 1 }), () => T0);
    const model = slidingWindowLogReference({ limit, windowMs: 1 });
    for (const [i, [key, cost, partial]] of schedule.entries()) {
      const expected = partial ? decidePartially(model, key, T0, cost) : model.decide(key, T0, cost);
      expect(await limiter.limit(key, { cost, partial }), `step ${i + 1}`).toEqual(expected);
    }
    await limiter.close();
  });
});

describe('partial admission: memory, Redis and Redis batched agree with the reference models (random schedules)', () => {
  for (const name of ALGORITHMS) {
    it(`${name}: identical admitted units, remaining, retryAfterMs and resetAfterMs`, async () => {
      await fc.assert(
        fc.asyncProperty(
          configurations[name],
          steps,
          fc.infiniteStream(fc.boolean()),
          async (configured, schedule, partials) => {
            let nowMs = T0;
            const clock = () => nowMs;
            const limiters = STORES.map((store) => create(store, configured.algorithm, clock));
            const model = configured.model();
            for (const step of schedule) {
              nowMs += advanceMs(step, configured.periodMs);
              const partial = partials.next().value as boolean;
              const expected = partial
                ? decidePartially(model, step.key, nowMs, step.cost)
                : model.decide(step.key, nowMs, step.cost);
              const where = `${configured.label} at ${nowMs}, ${step.key} cost ${step.cost}${partial ? ' partial' : ''}`;
              for (const [i, limiter] of limiters.entries()) {
                expect(await limiter.limit(step.key, { cost: step.cost, partial }), `${STORES[i]}: ${where}`).toEqual(
                  expected,
                );
              }
            }
            await Promise.all(limiters.map((limiter) => limiter.close()));
          },
        ),
        { numRuns: 25 },
      );
    });
  }

  it('batched: partial and whole requests for one key in one script call are decided in order', async () => {
    const algorithm = gcra({ limit: 10, periodMs: 1000 });
    const limiter = create('redis, batched', algorithm, () => T0);
    const memory = create('memory', algorithm, () => T0);
    const calls = [
      { cost: 4 },
      { cost: 4, partial: true },
      { cost: 4, partial: true },
      { cost: 1 },
      { cost: 3, partial: true },
    ];
    const batched = await Promise.all(calls.map((options) => limiter.limit('k', options)));
    const one = [];
    for (const options of calls) one.push(await memory.limit('k', options));
    expect(batched).toEqual(one);
    expect(batched.map((d) => d.admitted)).toEqual([undefined, 4, 2, undefined, 0]);
    await Promise.all([limiter.close(), memory.close()]);
  });
});

describe('partial admission: the per-master script (byNode) decides as the per-slot one', () => {
  it.each(ALGORITHMS)('%s: whole and partial requests over two keys in one call', async (name) => {
    const algorithm = configuredOf(name);
    const script = scripts[name];
    if (!script) throw new Error(`no script for ${name}`);
    const prefix = freshPrefix('master');
    const calls: [string, number, boolean][] = [
      ['a', 3, false],
      ['a', 4, true],
      ['b', 9, true],
      ['a', 2, true],
      ['b', 1, false],
    ];
    const args: (string | number)[] = [String(T0), ...algorithm.scriptParams];
    for (const [key, cost, partial] of calls) args.push(`${prefix}{${key}}`, costArg(cost, partial ? 'partial' : true));
    args.push(calls.length);
    const reply = (await runScript(fromIoredis(redis()), perNodeScript(script), [`${prefix}{a}`], args)) as number[];
    const memory = createMemoryLimiter({ algorithm, clock: () => T0, pruneIntervalMs: 0 });
    const expected = calls.flatMap(([key, cost, partial]) => {
      const d = memory.limitSync(key, { cost, partial });
      const first = partial ? (d.allowed ? 2 + (d.admitted as number) : -1) : d.allowed ? 1 : 0;
      return [first, d.remaining, d.retryAfterMs === Number.POSITIVE_INFINITY ? -1 : d.retryAfterMs, d.resetAfterMs];
    });
    expect(reply).toEqual(expected);
  });
});

function configuredOf(name: (typeof ALGORITHMS)[number]) {
  return fc.sample(configurations[name], { numRuns: 1, seed: 7 })[0]?.algorithm ?? gcra({ limit: 5, periodMs: 1000 });
}

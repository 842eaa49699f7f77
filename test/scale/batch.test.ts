import fc from 'fast-check';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gcra, StoreUnavailableError, tokenBucket } from '../../src/index.js';
import { createRedisLimiter, type ScriptClient } from '../../src/stores/redis/index.js';
import { type AlgorithmScript, perNodeScript } from '../../src/stores/redis/scripts/compose.js';
import { scripts } from '../../src/stores/redis/scripts/index.js';
import { profiles } from '../../src/testing/index.js';
import { type RedisServer, startRedis } from '../support/redis-server.js';
import { runRedisConformance, scriptCallsBetween, serverStats } from './support.js';
import { decideTurns, scheduledRequest } from './turns.js';

let server: RedisServer;
let connections: Redis[];
let subscribers: Redis[];
let admin: Redis;

beforeAll(async () => {
  server = await startRedis();
  connections = [0, 1, 2, 3].map(() => server.connect());
  subscribers = connections.map((connection) => connection.duplicate());
  admin = server.connect();
});
afterAll(() => {
  for (const subscriber of subscribers) subscriber.disconnect();
  return server.stop();
});

const stats = () => serverStats([admin]);
type Command = 'get' | 'mget' | 'pttl' | 'set' | 'evalsha';
/** Calls of each command since the server started, from INFO commandstats. */
async function commandCalls(): Promise<Record<Command, number>> {
  const info = await admin.info('commandstats');
  const calls = (name: Command) => Number(new RegExp(`^cmdstat_${name}:calls=(\\d+)`, 'm').exec(info)?.[1] ?? 0);
  return { get: calls('get'), mget: calls('mget'), pttl: calls('pttl'), set: calls('set'), evalsha: calls('evalsha') };
}
let prefixes = 0;
const prefix = () => `batch${++prefixes}:`;

runRedisConformance([
  {
    name: 'redis store (ioredis), batched',
    clients: () => connections,
    batch: true,
    subscriber: (connection) => subscribers[connection],
  },
]);

// Costs 0..7, so calls mix costs (one cost argument per decision), and all 2, so most calls
// share one cost argument.
const requests = {
  'mixed costs': scheduledRequest(['a', 'b', 'c', 'd']),
  'like costs': scheduledRequest(['a', 'b', 'c', 'd'], fc.constant(2)),
};

describe('exact decision batching', () => {
  for (const profile of profiles)
    for (const [costs, request] of Object.entries(requests)) {
      it(`${profile.name}, ${costs}: turns of concurrent requests decide exactly as one awaited call per request`, async () => {
        await fc.assert(
          fc.asyncProperty(
            fc.array(fc.array(request, { minLength: 1, maxLength: 30 }), { minLength: 1, maxLength: 8 }),
            async (turns) => {
              const algorithm = profile.build(6, 10_000);
              const { expected, actual } = await decideTurns(
                turns,
                (clock) =>
                  createRedisLimiter({ client: connections[0], algorithm, clock: clock.now, prefix: prefix() }),
                (clock) =>
                  createRedisLimiter({
                    client: connections[1],
                    algorithm,
                    clock: clock.now,
                    prefix: prefix(),
                    batch: { maxDecisions: 7 },
                  }),
              );
              expect(actual).toEqual(expected);
            },
          ),
          { numRuns: 30 },
        );
      });
    }

  it('sends 1,000 decisions over 1,000 keys in one turn as ⌈1000 / maxDecisions⌉ calls; plain sends 1,000', async () => {
    await admin.script('LOAD', (scripts.gcra as { source: string }).source);
    const algorithm = gcra({ limit: 10, periodMs: 60_000 });
    const keys = Array.from({ length: 1000 }, (_, i) => `key-${i}`);
    for (const [batch, calls] of [
      [false, 1000],
      [true, 16],
      [{ maxDecisions: 1000 }, 1],
      [{ maxDecisions: 1 }, 1000],
    ] as const) {
      const limiter = createRedisLimiter({ client: connections[2], algorithm, prefix: prefix(), batch });
      const before = await stats();
      const decisions = await Promise.all(keys.map((key) => limiter.limit(key, { cost: 3 })));
      expect(scriptCallsBetween(before, await stats()), JSON.stringify(batch)).toBe(calls);
      expect(decisions.every((d) => d.allowed && d.remaining === 7)).toBe(true);
    }
  });

  it('reads and writes a hot key once per call: 256 decisions of one key in one call cost 1 MGET (its state and its block) and 1 SET, admitting exactly 100; 256 more over the limit cost 1 MGET and no PTTL, 1 PTTL beyond the horizon', async () => {
    const hotPrefix = prefix();
    const limiter = createRedisLimiter({
      client: connections[2],
      algorithm: gcra({ limit: 100, periodMs: 60_000 }),
      prefix: hotPrefix,
      batch: { maxDecisions: 256 },
    });
    const turn = async () => {
      const before = await commandCalls();
      const decisions = await Promise.all(Array.from({ length: 256 }, () => limiter.limit('hot')));
      const after = await commandCalls();
      const calls = Object.fromEntries(Object.entries(after).map(([name, n]) => [name, n - before[name as Command]]));
      return { decisions, calls };
    };
    const first = await turn();
    expect(first.decisions.filter((d) => d.allowed)).toHaveLength(100);
    expect(first.decisions.map((d) => d.remaining).slice(98, 101)).toEqual([1, 0, 0]);
    // The MGET reads the key's block (docs/admin.md) with its state, once per key and call.
    expect(first.calls).toEqual({ get: 0, mget: 1, pttl: 0, set: 1, evalsha: 1 });
    // Over the limit the stored TAT is ahead of now but within the horizon: no PTTL.
    const second = await turn();
    expect(second.decisions.filter((d) => d.allowed)).toHaveLength(0);
    expect(second.calls).toEqual({ get: 0, mget: 1, pttl: 0, set: 0, evalsha: 1 });
    // A TAT an hour ahead (as a charge may leave) is asked about once for the key, and kept.
    await admin.set(`${hotPrefix}{hot}`, String((Date.now() + 3_600_000) * 1000), 'PX', 3_600_000);
    const third = await turn();
    expect(third.decisions.filter((d) => d.allowed)).toHaveLength(0);
    expect(third.calls).toEqual({ get: 0, mget: 1, pttl: 1, set: 0, evalsha: 1 });
  });

  it('reads the states and blocks of a call of 64 keys in one MGET, not one GET per key, and still honours one', async () => {
    const limiter = createRedisLimiter({
      client: connections[2],
      algorithm: gcra({ limit: 100, periodMs: 60_000 }),
      prefix: prefix(),
      batch: { maxDecisions: 64 },
    });
    await limiter.block?.('k7', 60_000);
    const keys = Array.from({ length: 64 }, (_, i) => `k${i}`);
    const before = await commandCalls();
    const decisions = await Promise.all(keys.map((key) => limiter.limit(key)));
    const after = await commandCalls();
    expect(after.get - before.get).toBe(0);
    expect(after.mget - before.mget).toBe(1);
    expect(after.evalsha - before.evalsha).toBe(1);
    expect(decisions.map((d, i) => (d.allowed ? '' : keys[i])).filter(Boolean)).toEqual(['k7']);
  });

  it("fails only the decision whose command fails; the call's others are decided and charged as alone", async () => {
    const shared = prefix();
    // A string key under a token bucket's prefix: HMGET on it fails with WRONGTYPE.
    await admin.set(`${shared}{b}`, '1', 'PX', 60_000);
    const algorithm = tokenBucket({ capacity: 10, rate: 1, periodMs: 60_000 });
    const batched = createRedisLimiter({ client: connections[2], algorithm, prefix: shared, batch: true });
    const outcomes = await Promise.allSettled(['a', 'b', 'c'].map((key) => batched.limit(key, { cost: 2 })));
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((outcomes[1] as PromiseRejectedResult).reason).toBeInstanceOf(StoreUnavailableError);
    expect(String((outcomes[1] as PromiseRejectedResult).reason.cause)).toMatch(/WRONGTYPE/);
    // Each of a and c charged once: 8 tokens left, as after one call of its own.
    const unbatched = createRedisLimiter({ client: connections[2], algorithm, prefix: shared });
    for (const key of ['a', 'c']) expect((await unbatched.peek(key)).remaining, key).toBe(8);
    expect(await admin.get(`${shared}{b}`)).toBe('1');
  });

  it('fails each failing decision alone wherever it falls in a call (first, in a row, last), per slot and per master', async () => {
    const shared = prefix();
    const algorithm = tokenBucket({ capacity: 10, rate: 1, periodMs: 60_000 });
    const script = scripts['token-bucket'] as AlgorithmScript;
    // String keys under a token bucket's prefix: HMGET on them fails with WRONGTYPE.
    const keys = ['b', 'a', 'c', 'f', 'd', 'g'].map((key) => `${shared}{${key}}`);
    const failing = [true, false, true, true, false, true];
    for (const [i, key] of keys.entries()) if (failing[i]) await admin.set(key, '1', 'PX', 60_000);
    const params = [...algorithm.scriptParams];
    const perSlot = (await admin.eval(script.source, keys.length, ...keys, '', ...params, 2)) as unknown[];
    const perMasterArgs = keys.flatMap((key) => [key, 2]);
    const perMaster = (await admin.eval(
      perNodeScript(script).source,
      1,
      keys[0] as string,
      '',
      ...params,
      ...perMasterArgs,
      keys.length,
    )) as unknown[];
    const unbatched = createRedisLimiter({ client: connections[2], algorithm, prefix: shared });
    for (const reply of [perSlot, perMaster]) {
      expect(reply).toHaveLength(4 * keys.length);
      for (const [i, fails] of failing.entries()) {
        const decision = reply.slice(4 * i, 4 * i + 4);
        if (fails) expect(decision).toEqual(['error', expect.stringMatching(/WRONGTYPE/), 0, 0]);
        else expect(decision[0], keys[i]).toBe(1);
      }
    }
    // a and d charged once by each call: 6 tokens left of 10.
    for (const key of ['a', 'd']) expect((await unbatched.peek(key)).remaining, key).toBe(6);
  });

  it("stores a batched GCRA key's TAT as its integer digits, in full up to 2^53", async () => {
    const script = scripts.gcra as AlgorithmScript;
    const keys = ['a', 'b'].map((key) => `${prefix()}{${key}}`);
    // A client clock near 2^53 µs: TAT = now × 1000 + cost × interval, 16 digits.
    const nowMs = 9_000_000_000_000;
    await admin.eval(script.source, keys.length, ...keys, nowMs, 6_000_000, 10, 3, 1);
    expect(await admin.mget(...keys)).toEqual(['9000000018000000', '9000000006000000']);
  });

  it('decides runs of one key in a call on the state read once per run, as separate calls would', async () => {
    const script = scripts.gcra as AlgorithmScript;
    const order = ['a', 'a', 'b', 'b', 'b', 'a', 'c', 'c'];
    const nowMs = 1_000_000;
    const interval = 6_000_000;
    const setUp = async () => {
      const shared = prefix();
      // a holds 5 of 10 units spent, b 9: b admits once, then denies.
      await admin.set(`${shared}{a}`, nowMs * 1000 + 5 * interval, 'PX', 60_000);
      await admin.set(`${shared}{b}`, nowMs * 1000 + 9 * interval, 'PX', 60_000);
      return order.map((key) => `${shared}{${key}}`);
    };
    const batchedKeys = await setUp();
    const batched = await admin.eval(script.source, order.length, ...batchedKeys, nowMs, interval, 10, 1);
    const aloneKeys = await setUp();
    const alone: unknown[] = [];
    for (const key of aloneKeys)
      alone.push(...((await admin.eval(script.source, 1, key, nowMs, interval, 10, 1)) as unknown[]));
    expect(batched).toEqual(alone);
    expect((batched as number[]).filter((_, i) => i % 4 === 0)).toEqual([1, 1, 1, 0, 0, 1, 1, 1]);
    const distinct = (keys: string[]) => [...new Set(keys)];
    expect(await admin.mget(...distinct(batchedKeys))).toEqual(await admin.mget(...distinct(aloneKeys)));
  });

  it('fails a whole call whose cost argument is no number, after a decision or before any', async () => {
    const script = scripts.gcra as AlgorithmScript;
    const keys = ['a', 'b', 'c'].map((key) => `${prefix()}{${key}}`);
    for (const costs of [
      ['1', 'x', '1'],
      ['x', '1', '1'],
    ]) {
      await expect(admin.eval(script.source, keys.length, ...keys, '', 6_000_000, 10, ...costs)).rejects.toThrow();
    }
  });

  it('decides a GCRA key of another type under the prefix as fresh, per slot and per master alike', async () => {
    const gcraScript = scripts.gcra as AlgorithmScript;
    const hashKey = async () => {
      const key = `${prefix()}{h}`;
      await admin.hset(key, 'd', '5');
      await admin.pexpire(key, 60_000);
      return key;
    };
    const interval = 6_000_000; // µs: 10 per minute, so the key outlives the checks below by seconds
    const perSlot = await hashKey();
    expect(await admin.eval(gcraScript.source, 1, perSlot, '', interval, 10, 3)).toEqual([1, 7, 0, 18_000]);
    // The per-master script runs on one node too: its first key declared, every key in ARGV.
    const perMaster = await hashKey();
    expect(await admin.eval(perNodeScript(gcraScript).source, 1, perMaster, '', interval, 10, perMaster, 3, 1)).toEqual(
      [1, 7, 0, 18_000],
    );
    for (const key of [perSlot, perMaster]) {
      expect(await admin.type(key)).toBe('string');
      expect(await admin.pttl(key)).toBeGreaterThan(0);
    }
  });

  it('sends a call of like decisions with one cost argument, and one per decision when costs differ', async () => {
    await admin.script('LOAD', (scripts.gcra as { source: string }).source);
    const redis = connections[2] as Redis;
    const argumentCounts: number[] = [];
    const recording: ScriptClient = {
      evalsha(sha, keys, args) {
        argumentCounts.push(args.length);
        return redis.evalsha(sha, keys.length, ...keys, ...args);
      },
      eval(source, keys, args) {
        argumentCounts.push(args.length);
        return redis.eval(source, keys.length, ...keys, ...args);
      },
    };
    const limiter = createRedisLimiter({
      client: recording,
      algorithm: gcra({ limit: 10, periodMs: 60_000 }),
      prefix: prefix(),
      batch: true,
    });
    const keys = ['a', 'b', 'c', 'a'];
    const like = await Promise.all(keys.map((key) => limiter.limit(key, { cost: 3 })));
    const mixed = await Promise.all(keys.map((key, i) => limiter.limit(key, { cost: i + 1 })));
    // now, emission interval, burst, then the cost arguments
    expect(argumentCounts).toEqual([3 + 1, 3 + 4]);
    expect(like.map((d) => d.remaining)).toEqual([7, 7, 7, 4]);
    expect(mixed.map((d) => d.remaining)).toEqual([3, 5, 4, 3]);
    expect(mixed.map((d) => d.allowed)).toEqual([true, true, true, false]);
  });

  it('never sends more than one call per decision, even one decision per turn', async () => {
    const limiter = createRedisLimiter({
      client: connections[2],
      algorithm: gcra({ limit: 10, periodMs: 60_000 }),
      prefix: prefix(),
      batch: true,
    });
    const before = await stats();
    for (let i = 0; i < 50; i++) await limiter.limit(`k${i % 5}`);
    expect(scriptCallsBetween(before, await stats())).toBe(50);
  });

  it('applies decisions queued before a reset before the reset', async () => {
    const limiter = createRedisLimiter({
      client: connections[3],
      algorithm: gcra({ limit: 5, periodMs: 60_000 }),
      prefix: prefix(),
      batch: true,
    });
    const queued = [limiter.limit('k', { cost: 5 }), limiter.limit('k')];
    await limiter.reset('k');
    expect((await Promise.all(queued)).map((d) => d.allowed)).toEqual([true, false]);
    expect((await limiter.limit('k', { cost: 5 })).allowed).toBe(true);
  });

  it('rejects only the invalid call of a turn; the others are decided', async () => {
    const limiter = createRedisLimiter({
      client: connections[3],
      algorithm: gcra({ limit: 5, periodMs: 60_000 }),
      prefix: prefix(),
      batch: true,
    });
    const results = await Promise.allSettled([
      limiter.limit('ok'),
      limiter.limit('', {}),
      limiter.limit('ok', { cost: -1 }),
      limiter.limit('ok', { cost: 2 }),
    ]);
    expect(
      results.map((r) => (r.status === 'fulfilled' ? r.value.remaining : (r.reason as { code: string }).code)),
    ).toEqual([4, 'ERR_SLUICE_INVALID_KEY', 'ERR_SLUICE_INVALID_COST', 2]);
  });

  it('rejects every decision of a call the store fails or answers wrongly with StoreUnavailableError', async () => {
    const algorithm = gcra({ limit: 5, periodMs: 60_000 });
    const answering = (reply: unknown): ScriptClient => ({ evalsha: async () => reply, eval: async () => reply });
    for (const client of [
      answering([1, 4, 0, 0]),
      answering('OK'),
      { evalsha: () => Promise.reject(new Error('ECONNRESET')), eval: () => Promise.reject(new Error('ECONNRESET')) },
    ]) {
      const limiter = createRedisLimiter({ client, algorithm, batch: true });
      const results = await Promise.allSettled([limiter.limit('a'), limiter.limit('b'), limiter.limit('c')]);
      expect(results.map((r) => r.status === 'rejected' && (r.reason as { code: string }).code)).toEqual([
        'ERR_SLUICE_STORE_UNAVAILABLE',
        'ERR_SLUICE_STORE_UNAVAILABLE',
        'ERR_SLUICE_STORE_UNAVAILABLE',
      ]);
    }
  });

  it('recovers from SCRIPT FLUSH: a batched turn right after a flush is decided in full', async () => {
    const limiter = createRedisLimiter({
      client: connections[0],
      algorithm: gcra({ limit: 3, periodMs: 60_000 }),
      prefix: prefix(),
      batch: true,
    });
    await admin.script('FLUSH');
    const decisions = await Promise.all(Array.from({ length: 100 }, (_, i) => limiter.limit(`k${i % 20}`)));
    expect(decisions.filter((d) => d.allowed)).toHaveLength(60);
  });
});

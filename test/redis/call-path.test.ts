import { createHook } from 'node:async_hooks';
import { describe, expect, it } from 'vitest';
import { gcra } from '../../src/index.js';
import { createRedisLimiter, fromIoredis } from '../../src/stores/redis/index.js';
import { useRedisServer } from '../support/redis-server.js';

const { redis } = useRedisServer();

/** Promises created while `call` runs to completion (counted by async_hooks, so deterministic). */
async function promisesOf(call: () => Promise<unknown>): Promise<number> {
  let created = 0;
  const hook = createHook({
    init(_id, type) {
      if (type === 'PROMISE') created++;
    },
  });
  hook.enable();
  try {
    await call();
  } finally {
    hook.disable();
  }
  return created;
}

describe('the unbatched decision path', () => {
  // Every HTTP request on a Redis limiter pays for this chain; an async frame per layer cost
  // three promises more per decision (and their heap) than the chain needs, and a separate
  // NOSCRIPT handler one more.
  it('adds at most one promise to the client call it makes', async () => {
    const client = redis();
    const limiter = createRedisLimiter({
      client,
      algorithm: gcra({ limit: 1000, periodMs: 60_000 }),
      prefix: 'call-path:',
      onWarning: false,
    });
    await limiter.limit('warm'); // loads the script
    const raw = fromIoredis(client);
    const clientOnly = await promisesOf(() => raw.eval('return {1, 1, 0, 60}', [], []));
    const decision = await promisesOf(() => limiter.limit('k'));
    expect(decision - clientOnly).toBeLessThanOrEqual(1);
  });

  it("a hot key's calls share one KEYS and one ARGV array; other keys and costs get their own", async () => {
    const sent: { keys: readonly string[]; args: readonly (string | number)[] }[] = [];
    const limiter = createRedisLimiter({
      client: redis(),
      algorithm: gcra({ limit: 5, periodMs: 60_000 }),
      prefix: 'call-path-arrays:',
      onWarning: false,
      wrapClient: (client) => ({
        evalsha: (sha, keys, args) => {
          sent.push({ keys, args });
          return client.evalsha(sha, keys, args);
        },
        eval: (source, keys, args) => client.eval(source, keys, args),
      }),
    });
    const remaining: number[] = [];
    for (const [key, cost] of [
      ['hot', 1],
      ['hot', 1],
      ['hot', 1],
      ['other', 1],
      ['hot', 2],
      ['hot', 2],
    ] as const) {
      remaining.push((await limiter.limit(key, { cost })).remaining);
    }
    expect(remaining).toEqual([4, 3, 2, 4, 0, 0]);
    expect(new Set(sent.slice(0, 3).map(({ keys }) => keys)).size).toBe(1);
    expect(new Set(sent.slice(0, 3).map(({ args }) => args)).size).toBe(1);
    expect(sent[3]?.keys).toEqual(['call-path-arrays:{other}']);
    expect(sent[4]?.keys).toEqual(['call-path-arrays:{hot}']);
    expect(sent[4]?.args).not.toBe(sent[0]?.args);
    expect(sent[5]?.args).toBe(sent[4]?.args);
  });

  it('rejects with StoreUnavailableError when the client throws or rejects, and recovers from NOSCRIPT', async () => {
    const client = redis();
    let failure: 'throw' | 'reject' | undefined;
    const limiter = createRedisLimiter({
      client,
      algorithm: gcra({ limit: 5, periodMs: 60_000 }),
      prefix: 'call-path-failures:',
      onWarning: false,
      wrapClient: (script) => ({
        evalsha(sha, keys, args) {
          if (failure === 'throw') throw new Error('client broke');
          if (failure === 'reject') return Promise.reject(new Error('connection lost'));
          return script.evalsha(sha, keys, args);
        },
        eval: (source, keys, args) => script.eval(source, keys, args),
      }),
    });
    failure = 'throw';
    const thrown = limiter.limit('k');
    await expect(thrown).rejects.toMatchObject({
      code: 'ERR_SLUICE_STORE_UNAVAILABLE',
      cause: { message: 'client broke' },
    });
    failure = 'reject';
    await expect(limiter.limit('k')).rejects.toMatchObject({
      code: 'ERR_SLUICE_STORE_UNAVAILABLE',
      cause: { message: 'connection lost' },
    });
    failure = undefined;
    await client.script('FLUSH');
    expect((await limiter.limit('k')).remaining).toBe(4);
  });

  it('still rejects, never throws, on a bad key or cost', async () => {
    const limiter = createRedisLimiter({
      client: redis(),
      algorithm: gcra({ limit: 5, periodMs: 1000 }),
      onWarning: false,
    });
    await limiter.limit('k');
    const badKey = limiter.limit('');
    const badCost = limiter.limit('k', { cost: -1 });
    const loneSurrogate = limiter.limit('\ud800');
    await expect(badKey).rejects.toMatchObject({ code: 'ERR_SLUICE_INVALID_KEY' });
    await expect(badCost).rejects.toMatchObject({ code: 'ERR_SLUICE_INVALID_COST' });
    await expect(loneSurrogate).rejects.toMatchObject({ code: 'ERR_SLUICE_INVALID_KEY' });
    await expect(limiter.limit('\ud800')).rejects.toMatchObject({ code: 'ERR_SLUICE_INVALID_KEY' });
  });
});

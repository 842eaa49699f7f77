import { describe, expect, it } from 'vitest';
import { createHttpLimiter, type RequestFacts } from '../../src/http/index.js';
import {
  createLeasedLimiter,
  createMemoryLimiter,
  gcra,
  InvalidCostError,
  InvalidKeyError,
  type Limiter,
} from '../../src/index.js';
import { withFailurePolicy } from '../../src/policy/index.js';
import { createRedisLimiter } from '../../src/stores/redis/index.js';
import { useRedisServer } from '../support/redis-server.js';

/*
 * Redis stores keys as UTF-8, where every lone surrogate becomes U+FFFD: '\uD800', '\uDC00'
 * and '\uFFFD' were three keys in memory and one in Redis, so the stores disagreed. Keys must
 * be well-formed UTF-16 on every store (issue 12 item 7).
 */

const { redis } = useRedisServer({ connections: 2 });
const admin = () => redis(1);

const LONE = ['\uD800', '\uDC00', 'user:\uD83D', '\uDE00user', 'a\uDC00\uD800b', `${'x'.repeat(300)}\uD800`];
const WELL_FORMED = ['\uFFFD', '\uD83D\uDE00', 'user:42'];
const algorithm = gcra({ limit: 1, periodMs: 60_000 });
const memory = () => createMemoryLimiter({ algorithm, clock: () => 0, pruneIntervalMs: 0 });
let prefixes = 0;
const redisLimiter = (prefix = `wf${++prefixes}:`) =>
  createRedisLimiter({ client: redis(), algorithm, prefix, clock: () => 1_700_000_000_000 });

/** Every call of `limiter` rejects each ill-formed key with InvalidKeyError. */
async function expectEveryCallRejects(limiter: Limiter): Promise<void> {
  for (const key of LONE) {
    await expect(limiter.limit(key), JSON.stringify(key)).rejects.toBeInstanceOf(InvalidKeyError);
    await expect(limiter.peek(key)).rejects.toBeInstanceOf(InvalidKeyError);
    await expect(limiter.reset(key)).rejects.toBeInstanceOf(InvalidKeyError);
    if (limiter.refund) await expect(limiter.refund(key, 1)).rejects.toBeInstanceOf(InvalidKeyError);
  }
}

/** The well-formed keys that look alike are distinct keys: each admits its one unit. */
async function expectDistinct(limiter: Limiter): Promise<void> {
  for (const key of WELL_FORMED) expect((await limiter.limit(key)).allowed, JSON.stringify(key)).toBe(true);
}

describe('keys with a lone surrogate are InvalidKeyError on every store', () => {
  it('memory: limit, peek, reset, refund and the synchronous calls', async () => {
    const limiter = memory();
    await expectEveryCallRejects(limiter);
    for (const key of LONE) {
      expect(() => limiter.limitSync(key)).toThrow(InvalidKeyError);
      expect(() => limiter.peekSync(key)).toThrow(InvalidKeyError);
    }
    expect(limiter.size).toBe(0);
    await expectDistinct(limiter);
  });

  it('Redis (real redis-server): rejected before anything is written; U+FFFD and a pair stay distinct keys', async () => {
    const prefix = 'wf-redis:';
    const limiter = redisLimiter(prefix);
    await expectEveryCallRejects(limiter);
    expect(await admin().keys(`${prefix}*`)).toEqual([]);
    await expectDistinct(limiter);
    expect((await admin().keys(`${prefix}*`)).sort()).toEqual(WELL_FORMED.map((key) => `${prefix}{${key}}`).sort());
  });

  it('Redis: memory and Redis now agree on a sequence mixing look-alike keys', async () => {
    const sequence = ['\uD800', '\uFFFD', '\uDC00', '\uFFFD'];
    const answers = async (limiter: Limiter) =>
      Promise.all(
        sequence.map((key) =>
          limiter.limit(key).then(
            (decision) => (decision.allowed ? 'allowed' : 'denied'),
            (error: Error) => error.name,
          ),
        ),
      );
    const expected = ['InvalidKeyError', 'allowed', 'InvalidKeyError', 'denied'];
    expect(await answers(memory())).toEqual(expected);
    expect(await answers(redisLimiter())).toEqual(expected);
  });

  it('Redis: cost null rejects with InvalidCostError and writes nothing', async () => {
    const prefix = 'wf-cost:';
    await expect(redisLimiter(prefix).limit('k', { cost: null as never })).rejects.toBeInstanceOf(InvalidCostError);
    expect(await admin().keys(`${prefix}*`)).toEqual([]);
  });

  it('leased (over Redis) and policy-wrapped limiters', async () => {
    const leased = createLeasedLimiter({ remote: redisLimiter(), leaseSize: 1 });
    await expectEveryCallRejects(leased);
    for (const key of LONE) expect(() => leased.tryLimit(key)).toThrow(InvalidKeyError);
    await expectEveryCallRejects(withFailurePolicy(memory()));
    await expectEveryCallRejects(withFailurePolicy(redisLimiter()));
  });

  it('HTTP: a key function returning an ill-formed identity, short or hashed for length, rejects the check', async () => {
    const facts: RequestFacts<null> = {
      request: null,
      method: 'GET',
      path: '/',
      header: () => undefined,
      remoteAddress: '127.0.0.1',
    };
    for (const identity of ['\uD800', `${'k'.repeat(600)}\uDC00`]) {
      const http = createHttpLimiter({ limits: { limiter: memory(), key: () => identity } });
      await expect(http.check(facts)).rejects.toBeInstanceOf(InvalidKeyError);
    }
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLeasedLimiter, createMemoryLimiter, forwardOptional, gcra, type Limiter } from '../../src/index.js';
import { withFailurePolicy } from '../../src/policy/index.js';
import { createRedisLimiter } from '../../src/stores/redis/index.js';
import { type RedisServer, startRedis } from '../support/redis-server.js';

let server: RedisServer;
beforeAll(async () => {
  server = await startRedis();
});
afterAll(() => server.stop());

const free = { limit: 100, periodMs: 60_000 };
const pro = { limit: 1_000, periodMs: 60_000 };

describe('per-call params through the failure policy', () => {
  it("the local fallback holds the call's own limit ÷ N while Redis is stopped (SIGSTOP)", async () => {
    const store = createRedisLimiter({
      client: server.connect(),
      algorithm: gcra(free),
      prefix: 'policy:',
      onWarning: false,
    });
    const limiter = withFailurePolicy(store, {
      failure: 'fallback',
      fallback: { instances: 4 },
      deadlineMs: 20,
      breaker: { failureThreshold: 1, coolDownMs: 60_000 },
      onDegraded: () => {},
    });
    await store.limit('warm'); // connected, script loaded: the policy's deadline is for the pause
    expect(await limiter.limit('warm', { params: pro })).toMatchObject({ allowed: true, limit: 1_000 });
    expect((await limiter.limit('warm', { params: pro })).degraded).toBeUndefined();
    server.pause();
    try {
      let admitted = 0;
      for (let i = 0; i < 300; i++) {
        const decision = await limiter.limit('user', { params: pro });
        expect(decision.degraded).toBe(true);
        if (decision.allowed) admitted++;
      }
      // pro's burst of 1,000 ÷ 4 instances; free's would be 25.
      expect(admitted).toBe(250);
      const other = await limiter.limit('free-user', { params: free, cost: 25 });
      expect(other).toMatchObject({ allowed: true, remaining: 0, degraded: true });
    } finally {
      server.resume();
    }
    await limiter.close();
  });

  it('rejects bad params even when the breaker answers, and forwards algorithmFor', async () => {
    const limiter = withFailurePolicy(createMemoryLimiter({ algorithm: gcra(free) }), { failure: 'open' });
    await expect(limiter.limit('k', { params: { windowMs: 1 } })).rejects.toThrow(/unknown parameter 'windowMs'/);
    expect(limiter.algorithmFor?.(pro).limit).toBe(1_000);
  });
});

describe('decorators keep per-call params', () => {
  it('the documented stack (policy over leasing over a store) and a forwardOptional decorator expose algorithmFor', async () => {
    const store = createMemoryLimiter({ algorithm: gcra(free) });
    const stack = withFailurePolicy(createLeasedLimiter({ remote: store, leaseSize: 10 }), { failure: 'open' });
    const decorated: Limiter = forwardOptional(stack, {
      algorithm: stack.algorithm,
      limit: (key, options) => stack.limit(key, options),
      peek: (key, options) => stack.peek(key, options),
      reset: (key) => stack.reset(key),
      close: () => stack.close(),
    });
    expect(decorated.algorithmFor?.(pro).limit).toBe(1_000);
    const decisions = await Promise.all(Array.from({ length: 150 }, () => decorated.limit('k', { params: pro })));
    expect(decisions.every((d) => d.allowed && d.limit === 1_000)).toBe(true);
    await decorated.close();
  });
});

describe('sharding and per-call params', () => {
  it('a sharded limiter refuses params (its sub-keys hold the limit ÷ shards), writing nothing', async () => {
    const { createShardedLimiter } = await import('../../src/index.js');
    const sharded = createShardedLimiter({
      algorithm: gcra(free),
      shards: 4,
      create: (algorithm) => createMemoryLimiter({ algorithm }),
    });
    await expect(sharded.limit('k', { params: pro })).rejects.toThrow(/sharded limiter takes no per-call params/);
    expect(sharded.algorithmFor).toBeUndefined();
    expect(await sharded.peek('k')).toMatchObject({ remaining: 100 });
  });
});

import { afterAll, describe, expect, it } from 'vitest';
import { createLeasedLimiter, createMemoryLimiter, type Decision, gcra, type Limiter } from '../../src/index.js';
import { withFailurePolicy } from '../../src/policy/index.js';
import { createRedisLimiter } from '../../src/stores/redis/index.js';
import { manualClock } from '../http/support/scenarios.js';
import { disconnectAll, resilientClient } from '../policy/support/clients.js';
import { held } from '../support/held-keys.js';
import { type RedisServer, startRedis, useRedisServer } from '../support/redis-server.js';

/*
 * A partial request (`limit(key, { cost, partial: true })`) answers how many units it admitted,
 * in `admitted`. Denied by a block, only the leased limiter said `admitted: 0`: the memory
 * limiter, the Redis limiter (whose script replies a block alike to every request) and the local
 * fallback answered without the field. Every store now gives the same decision.
 */

const { redis } = useRedisServer();
const HOUR = 3_600_000;
const BLOCK_MS = 60_000;
const algorithm = gcra({ limit: 10, periodMs: HOUR });
const blockedPartial: Decision = {
  allowed: false,
  limit: 10,
  remaining: 0,
  retryAfterMs: BLOCK_MS,
  resetAfterMs: HOUR / 10, // the later of the block's end and a unit's emission interval
  reason: 'blocked',
  admitted: 0,
};
const stopped: RedisServer[] = [];

afterAll(async () => {
  disconnectAll();
  await Promise.all(stopped.map((server) => server.stop()));
});

/** Blocks `key` through `limiter`, then asks for 5 units of it partially. */
async function blockedPartialCall(limiter: Limiter, key: string): Promise<Decision> {
  await limiter.block?.(key, BLOCK_MS);
  return limiter.limit(key, { cost: 5, partial: true });
}

describe('a partial request denied by a block says it admitted nothing, on every store', () => {
  it('memory, Redis and the leased limiter give the same decision, with admitted: 0', async () => {
    const clock = manualClock();
    const memory = createMemoryLimiter({ algorithm, clock: clock.read, pruneIntervalMs: 0 });
    const plain = createRedisLimiter({ client: held(redis()), algorithm, prefix: 'pb-plain:', clock: clock.read });
    const remote = createRedisLimiter({ client: held(redis()), algorithm, prefix: 'pb-lease:', clock: clock.read });
    const leased = createLeasedLimiter({ remote, leaseSize: 5, clock: clock.read, onWarning: false });
    try {
      const decisions = {
        memory: await blockedPartialCall(memory, 'k'),
        redis: await blockedPartialCall(plain, 'k'),
        leased: await blockedPartialCall(leased, 'k'),
      };
      expect(decisions).toEqual({ memory: blockedPartial, redis: blockedPartial, leased: blockedPartial });
    } finally {
      await Promise.all([memory.close(), plain.close(), leased.close()]);
    }
  });

  it('so does the local fallback while Redis is SIGSTOPped', async () => {
    const server = await startRedis();
    stopped.push(server);
    const clock = manualClock();
    const store = createRedisLimiter({ client: await resilientClient(server.port), algorithm, onWarning: false });
    const limiter = withFailurePolicy(store, {
      failure: 'fallback',
      fallback: { instances: 1 },
      deadlineMs: 500,
      breaker: { failureThreshold: 1000, coolDownMs: HOUR },
      clock: clock.read,
      onWarning: false,
    });
    await limiter.block?.('k', BLOCK_MS);
    server.pause();
    try {
      const { resetAfterMs, ...decision } = await limiter.limit('k', { cost: 5, partial: true });
      const { resetAfterMs: _, ...expected } = blockedPartial;
      expect(decision).toEqual({ ...expected, degraded: true, degradedReason: 'timeout', failure: 'fallback' });
      // The fallback reads the key with a peek, whose resetAfterMs is the held state's (none): the block's.
      expect(resetAfterMs).toBe(BLOCK_MS);
    } finally {
      server.resume();
      await limiter.close();
    }
  });

  it('a whole (not partial) blocked request still answers without admitted', async () => {
    const clock = manualClock();
    const memory = createMemoryLimiter({ algorithm, clock: clock.read, pruneIntervalMs: 0 });
    const plain = createRedisLimiter({ client: held(redis()), algorithm, prefix: 'pb-whole:', clock: clock.read });
    for (const limiter of [memory, plain]) {
      await limiter.block?.('k', BLOCK_MS);
      expect(await limiter.limit('k', { cost: 5 })).not.toHaveProperty('admitted');
    }
    await Promise.all([memory.close(), plain.close()]);
  });
});

import { describe, expect, it } from 'vitest';
import { fixedWindow, slidingWindowCounter, slidingWindowLog, tokenBucket } from '../../src/index.js';
import { createRedisLimiter, fromIoredis } from '../../src/stores/redis/index.js';
import { useRedisServer } from '../support/redis-server.js';

const { redis } = useRedisServer();

/*
 * Redis 7.0 deletes a key at once when PEXPIRE's expiry is already past by its clock, read again
 * after the TTL is added: whenever its millisecond ticks inside the command. A decision that
 * wrote a TTL of 1 or 2 ms could so leave the next decision on that key, in the same batched
 * call, a fresh key: both admitted where the limit is 1. The real scripts on the server's clock,
 * no held keys: limit 1 per 1 ms, each key decided twice in one call.
 */
const PAIRS = 50_000;
const algorithms = {
  'sliding window log': slidingWindowLog({ limit: 1, windowMs: 1 }),
  'fixed window': fixedWindow({ limit: 1, windowMs: 1 }),
  'token bucket': tokenBucket({ capacity: 1, rate: 1, periodMs: 1 }),
  'sliding window counter': slidingWindowCounter({ limit: 1, windowMs: 1 }),
};

describe.each(Object.entries(algorithms))('%s: a key written with a 1–2 ms TTL', (name, algorithm) => {
  it(`admits one of each of ${PAIRS} same-key pairs batched on the server's clock`, async () => {
    const limiter = createRedisLimiter({
      client: fromIoredis(redis()),
      algorithm,
      prefix: `short-ttl:${name}:`,
      batch: { maxDecisions: 1000 },
    });
    const ids = Array.from({ length: PAIRS }, (_, i) => `k${i}`);
    const decisions = await Promise.all(ids.flatMap((id) => [limiter.limit(id), limiter.limit(id)]));
    const firsts = decisions.filter((_, at) => at % 2 === 0);
    const seconds = decisions.filter((_, at) => at % 2 === 1);
    expect(firsts.filter((d) => d.allowed).length, 'first requests admitted').toBe(PAIRS);
    expect(seconds.filter((d) => d.allowed).length, 'pairs with both requests admitted').toBe(0);
    await limiter.close();
  });
});

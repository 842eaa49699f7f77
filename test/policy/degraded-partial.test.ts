import { afterAll, describe, expect, it } from 'vitest';
import { gcra } from '../../src/index.js';
import { withFailurePolicy } from '../../src/policy/index.js';
import { createRedisLimiter } from '../../src/stores/redis/index.js';
import { manualClock } from '../http/support/scenarios.js';
import { type RedisServer, startRedis } from '../support/redis-server.js';
import { disconnectAll, resilientClient } from './support/clients.js';

/*
 * A partial request (`limit(key, { cost, partial: true })`) admits as many of its cost as the key
 * holds and says how many in `admitted`. Degraded, the local fallback decided it all-or-nothing
 * (it dropped `partial`), and fail open and fail closed answered without `admitted`.
 */

const HOUR = 3_600_000;
let server: RedisServer | undefined;

afterAll(async () => {
  disconnectAll();
  server?.resume();
  await server?.stop();
});

describe('a partial request while the store cannot answer (Redis SIGSTOPped)', () => {
  it('is decided partially by the fallback, and fail open and closed say what they admitted', async () => {
    server = await startRedis();
    const clock = manualClock();
    const store = createRedisLimiter({
      client: await resilientClient(server.port),
      algorithm: gcra({ limit: 10, periodMs: HOUR }),
      onWarning: false,
    });
    const limiter = withFailurePolicy(store, {
      failure: 'fallback',
      fallback: { instances: 1 },
      deadlineMs: 300,
      breaker: { failureThreshold: 1, coolDownMs: HOUR },
      clock: clock.read,
      onWarning: false,
    });
    server.pause();
    try {
      expect(await limiter.limit('k', { cost: 8 })).toMatchObject({ allowed: true, remaining: 2, degraded: true });
      expect(await limiter.limit('k', { cost: 5, partial: true })).toMatchObject({
        allowed: true,
        admitted: 2,
        remaining: 0,
        failure: 'fallback',
      });
      expect(await limiter.limit('k', { cost: 5, partial: true })).toMatchObject({ allowed: false, admitted: 0 });
      expect(await limiter.limit('k', { cost: 5, partial: true, failure: 'open' })).toMatchObject({
        allowed: true,
        admitted: 5,
        failure: 'open',
      });
      expect(await limiter.limit('k', { cost: 5, partial: true, failure: 'closed' })).toMatchObject({
        allowed: false,
        admitted: 0,
        failure: 'closed',
      });
      expect(await limiter.limit('k', { cost: 5, failure: 'open' })).not.toHaveProperty('admitted');
    } finally {
      server.resume();
      await limiter.close();
    }
  });
});

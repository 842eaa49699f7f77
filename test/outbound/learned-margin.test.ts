import { Agent, request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gcra } from '../../src/index.js';
import { createAcquirer, createRedisPauseStore, throttle } from '../../src/outbound/index.js';
import { createRedisLimiter } from '../../src/stores/redis/index.js';
import { useRedisServer } from '../support/redis-server.js';
import { type FakeUpstream, startFakeUpstream } from './support/upstream.js';

/*
 * A learned rate gets the margin docs/outbound.md tells users to leave under a configured one.
 * A real upstream enforces 5 per rolling second and announces it (draft-11 RateLimit-Policy);
 * Sluice is configured for 10/s; 4 acquirers on their own connections share one Redis key.
 * Followed exactly (2 units per call: 5/s), arrivals one slot apart meet every jitter of the
 * event loop and the network: 9 429s in 80 calls here (33–39 in a longer fleet run). With the
 * 4 % margin, 10 ÷ 4.8 rounds up to 3 units per call (3.3/s). Counted, not timed.
 */
const INSTANCES = 4;
const CALLS_PER_INSTANCE = 20;
const redis = useRedisServer({ connections: INSTANCES });
let upstream: FakeUpstream;
beforeAll(async () => {
  upstream = await startFakeUpstream({ limit: 5, windowMs: 1000, announce: true });
});
afterAll(() => upstream?.close());

describe('a learned rate keeps the margin of a configured one', { timeout: 120_000 }, () => {
  it('4 instances at 10/s against an upstream enforcing and announcing 5/s: at most one 429 per instance', async () => {
    const agent = new Agent({ keepAlive: true });
    const get = (url: string) =>
      new Promise<{ status: number; headers: Record<string, string | string[] | undefined> }>((resolve, reject) => {
        request(url, { agent }, (res) => {
          res.resume();
          res.once('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers }));
        })
          .once('error', reject)
          .end();
      });
    const statuses: number[] = [];
    const instances = Array.from({ length: INSTANCES }, (_, i) => {
      const client = redis.redis(i);
      const limiter = createRedisLimiter({
        client,
        algorithm: gcra({ limit: 10, periodMs: 1000, burst: 10 }),
        prefix: 'margin:',
      });
      const acquirer = createAcquirer(limiter, {
        pace: true,
        pauses: createRedisPauseStore({ client, prefix: 'margin:pause:' }),
      });
      const call = throttle(get, { limiter: acquirer, key: 'partner-api', response: (res) => res });
      return { acquirer, call };
    });
    await Promise.all(
      instances.map(async ({ call }) => {
        // Two callers per instance, one after another: each call waits its turn, as a client would.
        const worker = async (count: number) => {
          for (let i = 0; i < count; i++) statuses.push((await call(upstream.url)).status);
        };
        await Promise.all([worker(CALLS_PER_INSTANCE / 2), worker(CALLS_PER_INSTANCE / 2)]);
      }),
    );
    for (const { acquirer } of instances) acquirer.close();
    agent.destroy();
    console.log(`429s: ${upstream.log.refused} of ${statuses.length} calls`);
    expect(statuses).toHaveLength(INSTANCES * CALLS_PER_INSTANCE);
    expect(statuses.filter((status) => status !== 200 && status !== 429)).toEqual([]);
    expect(upstream.log.refused).toBeLessThanOrEqual(INSTANCES);
  });
});

import { once } from 'node:events';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gcra } from '../../src/algorithms/gcra.js';
import type { HttpDegradedChange } from '../../src/http/index.js';
import type { Limiter } from '../../src/limiter.js';
import { type DegradedEvent, withFailurePolicy } from '../../src/policy/index.js';
import { createRedisLimiter } from '../../src/stores/redis/index.js';
import { type RedisServer, startRedis } from '../support/redis-server.js';
import { send } from './support/client.js';
import { type Harness, harnesses } from './support/harnesses.js';
import { withServer } from './support/scenarios.js';

/*
 * onDegradedChange through real HTTP on every adapter, against a real redis-server paused with
 * SIGSTOP: two events per outage however many requests it lasts, beside the per-decision
 * onDegraded of the policy. Deadlines are 300 ms so a loaded machine does not turn an ordinary
 * decision into a degraded one.
 */
const DEADLINE_MS = 300;
let redis: RedisServer;
const clients: Redis[] = [];

beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  for (const client of clients) client.disconnect();
  await redis?.stop();
});

async function client(options: { commandTimeout?: number } = {}): Promise<Redis> {
  const created = new Redis({ host: '127.0.0.1', port: redis.port, maxRetriesPerRequest: 0, ...options });
  created.on('error', () => {});
  clients.push(created);
  await once(created, 'ready');
  return created;
}

/**
 * 2 ordinary requests, 3 while Redis is paused, 2 after it resumes. Returns the statuses and the
 * milliseconds from the first request of the outage to the end of the first one after it.
 */
async function outage(url: string): Promise<{ statuses: number[]; spanMs: number }> {
  const statuses: number[] = [];
  const hello = async () => statuses.push((await send(`${url}/hello`)).status);
  await hello();
  await hello();
  redis.pause();
  const startedAt = performance.now();
  try {
    for (let i = 0; i < 3; i++) await hello();
  } finally {
    redis.resume();
  }
  await hello();
  const spanMs = performance.now() - startedAt;
  await hello();
  return { statuses, spanMs };
}

function expectOneSpell(events: HttpDegradedChange[], reason: string, spanMs: number): void {
  expect(events.map((event) => event.state)).toEqual(['degraded', 'recovered']);
  expect(events[0]).toEqual({ state: 'degraded', reason });
  const recovered = events[1] as Extract<HttpDegradedChange, { state: 'recovered' }>;
  expect(recovered).toMatchObject({ reason, degradedDecisions: 3 });
  // The spell runs from the first degraded decision to the first ordinary one: at least the
  // two later deadlines, at most the span the test measured around it.
  expect(recovered.durationMs).toBeGreaterThanOrEqual(2 * DEADLINE_MS - 10);
  expect(recovered.durationMs).toBeLessThanOrEqual(spanMs);
}

const policyLimiter = async (perDecision: DegradedEvent[]): Promise<Limiter> =>
  withFailurePolicy(
    createRedisLimiter({ client: await client(), algorithm: gcra({ limit: 1000, periodMs: 60_000 }) }),
    {
      failure: 'open',
      deadlineMs: DEADLINE_MS,
      breaker: { failureThreshold: 1000 },
      onDegraded: (event) => perDecision.push(event),
      onWarning: false,
    },
  );

describe.each(harnesses)('$name', (harness: Harness) => {
  it('Redis paused under a fail-open policy: degraded → recovered once, 3 decisions; onDegraded per decision', async () => {
    const events: HttpDegradedChange[] = [];
    const perDecision: DegradedEvent[] = [];
    const options = {
      limiter: await policyLimiter(perDecision),
      onDegradedChange: (e: HttpDegradedChange) => events.push(e),
    };
    await withServer(harness, options, async ({ url, hits }) => {
      const { statuses, spanMs } = await outage(url);
      expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 200]);
      expect(hits.get('/hello')).toBe(7);
      expectOneSpell(events, 'timeout', spanMs);
      expect(perDecision.map((event) => event.reason)).toEqual(['timeout', 'timeout', 'timeout']);
    });
  });

  it('Redis paused, no policy (the store throws) and the app fails open: reason store-unavailable', async () => {
    const events: HttpDegradedChange[] = [];
    const limiter = createRedisLimiter({
      client: await client({ commandTimeout: DEADLINE_MS }),
      algorithm: gcra({ limit: 1000, periodMs: 60_000 }),
    });
    const options = {
      limiter,
      failure: 'open',
      onWarning: false,
      onDegradedChange: (e: HttpDegradedChange) => events.push(e),
    } as const;
    await withServer(harness, options, async ({ url }) => {
      const { statuses, spanMs } = await outage(url);
      expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 200]);
      expectOneSpell(events, 'store-unavailable', spanMs);
    });
  });
});

describe('onDegradedChange', () => {
  it('a listener that throws changes no response', async () => {
    const harness = harnesses[0] as Harness;
    const options = {
      limiter: await policyLimiter([]),
      onDegradedChange: () => {
        throw new Error('logging bug');
      },
    };
    await withServer(harness, options, async ({ url }) => {
      const { statuses } = await outage(url);
      expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 200]);
    });
  });
});

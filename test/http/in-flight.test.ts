import { type ClientRequest, request as httpRequest } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { readCommandStats, roundTripsBetween } from '../../bench/lib/commandstats.mjs';
import { createConcurrencyLimiter, memoryHolds, redisHolds } from '../../src/concurrency/index.js';
import { createHttpLimiter } from '../../src/http/index.js';
import { ConfigError, createMemoryLimiter, gcra } from '../../src/index.js';
import { createRedisLimiter } from '../../src/stores/redis/index.js';
import { useRedisServer } from '../support/redis-server.js';
import { send } from './support/client.js';
import { harnesses } from './support/harnesses.js';

const redis = useRedisServer({ connections: 2 });
const frozen = () => 1_000_000;
const tenant = { 'x-tenant': 't1' };
const byTenant = (info: { header(name: string): string | undefined }) => info.header('x-tenant') ?? null;

/** A request whose handler starts and never finishes (x-outcome: hang), open until `abort`. */
function hanging(url: string): { request: ClientRequest; abort(): void } {
  const request = httpRequest(`${url}/hello`, { headers: { ...tenant, 'x-outcome': 'hang' }, agent: false });
  request.on('error', () => {}); // the abort below
  request.end();
  return { request, abort: () => request.destroy() };
}

async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await check()) return;
    await sleep(10);
  }
  throw new Error(`timed out waiting for ${what}`);
}

function setup() {
  const rate = createMemoryLimiter({
    algorithm: gcra({ limit: 10, periodMs: 60_000 }),
    clock: frozen,
    pruneIntervalMs: 0,
  });
  const reports = createConcurrencyLimiter({ limit: 2, holdMs: 60_000, store: memoryHolds() });
  const options = {
    limits: { name: 'rate', limiter: rate, key: byTenant },
    inFlight: { name: 'reports', limiter: reports, key: byTenant },
  };
  return { rate, reports, options };
}

describe('in-flight caps through real HTTP', () => {
  for (const harness of harnesses) {
    describe(harness.name, () => {
      it('holds a slot per request in flight; a full cap is 429 and gives the rate units back', async () => {
        const { rate, reports, options } = setup();
        const server = await harness.start(options);
        const open = [hanging(server.url), hanging(server.url)];
        try {
          await until(async () => (await reports.held('reports:id:t1')) === 2, 'two holds');
          const refused = await send(`${server.url}/hello`, { headers: tenant });
          expect(refused.status).toBe(429);
          expect(JSON.parse(refused.body)).toMatchObject({ status: 429, limit: 'reports' });
          // 2 requests hold their rate units; the refused one's unit came back.
          expect((await rate.peek('rate:id:t1')).remaining).toBe(8);
          expect(server.hits.get('/hello')).toBe(2);
          // A client that hangs up mid-request frees its slot.
          open[0]?.abort();
          await until(async () => (await reports.held('reports:id:t1')) === 1, 'the release on disconnect');
          const admitted = await send(`${server.url}/hello`, { headers: tenant });
          expect(admitted.status).toBe(200);
          // A finished response frees its slot too.
          await until(async () => (await reports.held('reports:id:t1')) === 1, 'the release on finish');
        } finally {
          for (const request of open) request.abort();
          await server.close();
        }
        await until(async () => (await reports.held('reports:id:t1')) === 0, 'every hold released');
      });

      it('a rate limit that denies takes no hold; a request the key exempts (null) takes none', async () => {
        const { rate, reports, options } = setup();
        await rate.limit('rate:id:t1', { cost: 10 });
        const server = await harness.start(options);
        try {
          expect((await send(`${server.url}/hello`, { headers: tenant })).status).toBe(429);
          expect(await reports.held('reports:id:t1')).toBe(0);
          expect((await send(`${server.url}/hello`)).status).toBe(200);
        } finally {
          await server.close();
        }
      });
    });
  }
});

describe('in-flight caps on a real redis-server', () => {
  it('node:http: Redis holds and a Redis rate limit, all or nothing', async () => {
    const client = redis.redis(0);
    const rate = createRedisLimiter({
      client,
      algorithm: gcra({ limit: 10, periodMs: 60_000 }),
      prefix: 'inflight-rate:',
    });
    const reports = createConcurrencyLimiter({
      limit: 1,
      holdMs: 60_000,
      store: redisHolds({ client, prefix: 'inflight-holds:' }),
    });
    const harness = harnesses[0] as (typeof harnesses)[0];
    const server = await harness.start({
      limits: { name: 'rate', limiter: rate, key: byTenant },
      inFlight: { name: 'reports', limiter: reports, key: byTenant },
    });
    const open = hanging(server.url);
    try {
      await until(async () => (await reports.held('reports:id:t1')) === 1, 'the hold');
      expect((await send(`${server.url}/hello`, { headers: tenant })).status).toBe(429);
      expect((await rate.peek('rate:id:t1')).remaining).toBe(9);
      open.abort();
      await until(async () => (await reports.held('reports:id:t1')) === 0, 'the release on disconnect');
      expect((await send(`${server.url}/hello`, { headers: tenant })).status).toBe(200);
      await until(async () => (await reports.held('reports:id:t1')) === 0, 'the release on finish');
      expect((await rate.peek('rate:id:t1')).remaining).toBe(8);

      // Round trips per admitted request: the rate decision, the acquire, the release.
      const before = await readCommandStats(redis.redis(1));
      for (let i = 0; i < 5; i++) expect((await send(`${server.url}/hello`, { headers: tenant })).status).toBe(200);
      let polls = 0;
      await until(async () => {
        polls++;
        return (await reports.held('reports:id:t1')) === 0;
      }, 'every release');
      const after = await readCommandStats(redis.redis(1));
      expect(roundTripsBetween(before, after) - polls).toBe(15);
    } finally {
      open.abort();
      await server.close();
    }
  });
});

describe('inFlight options', () => {
  it('ConfigError for a cap without acquire, a key that is not a function, or a repeated name', () => {
    const limiter = createMemoryLimiter({ algorithm: gcra({ limit: 1, periodMs: 1000 }) });
    const cap = createConcurrencyLimiter({ limit: 1, holdMs: 1000, store: memoryHolds() });
    expect(() => createHttpLimiter({ limiter, inFlight: { limiter: {} as never } })).toThrow(ConfigError);
    expect(() => createHttpLimiter({ limiter, inFlight: { limiter: cap, key: 'x' as never } })).toThrow(/key/);
    expect(() => createHttpLimiter({ limiter, inFlight: [{ limiter: cap }, { limiter: cap }] })).toThrow(/unique/);
  });
});

import { Redis, type RedisOptions } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gcra } from '../../src/algorithms/gcra.js';
import { StoreUnavailableError } from '../../src/errors.js';
import { METRICS, storeMetrics } from '../../src/observability/index.js';
import { createHeartbeat } from '../../src/stores/redis/heartbeat.js';
import { createRedisLimiter } from '../../src/stores/redis/redis-limiter.js';
import { freePort, type RedisServer, startRedis } from '../support/redis-server.js';
import { createMeters } from './support/metrics.js';
import { scriptCalls } from './support/script-calls.js';

/*
 * sluice.store.duration carries the operation of every kind of round trip the issue names
 * (decide, batch, refund, heartbeat), one sample per round trip redis-server executed, and
 * sluice.store.errors carries each kind of failure (timeout, connection, script-error), each
 * produced for real: a paused server, a closed port, a user the server's ACL forbids scripts.
 */
const HOUR = 3_600_000;
let redis: RedisServer;
let admin: Redis;
let metrics: ReturnType<typeof createMeters>;
const clients: Redis[] = [];

beforeAll(async () => {
  redis = await startRedis();
  admin = redis.connect();
  metrics = createMeters();
});
afterAll(async () => {
  for (const client of clients) client.disconnect();
  await metrics?.shutdown();
  await redis?.stop();
});

function client(options: RedisOptions): Redis {
  const made = new Redis({ host: '127.0.0.1', port: redis.port, maxRetriesPerRequest: 0, ...options });
  made.on('error', () => {});
  clients.push(made);
  return made;
}

async function samples(match: Record<string, string>): Promise<number> {
  return metrics.totalOf(await metrics.collect(), METRICS.storeDuration, { 'sluice.limit': 'ops', ...match });
}

describe('store metrics per operation and error kind', () => {
  it('decide, batch, refund, heartbeat and each admin operation: one sample per round trip', async () => {
    const wrapClient = storeMetrics({ meter: metrics.meter, name: 'ops' });
    const redisClient = client({});
    const limiter = createRedisLimiter({
      client: redisClient,
      algorithm: gcra({ limit: 10, periodMs: HOUR }),
      wrapClient,
    });
    const batching = createRedisLimiter({
      client: redisClient,
      algorithm: gcra({ limit: 10, periodMs: HOUR }),
      prefix: 'batched:',
      batch: true,
      wrapClient,
    });
    const heartbeat = createHeartbeat({ client: redisClient, intervalMs: HOUR, wrapClient });
    const operator = limiter as Required<typeof limiter>; // a Redis limiter has every admin operation
    const steps: [string, () => Promise<unknown>][] = [
      ['decide', () => limiter.limit('k').then(() => limiter.limit('k'))],
      ['refund', () => (limiter.refund as NonNullable<typeof limiter.refund>)('k', 1)],
      ['batch', () => Promise.all([batching.limit('a'), batching.limit('b'), batching.limit('c')])],
      ['heartbeat', () => heartbeat.beat()],
      // Each admin operation is its own, not counted as a reset.
      ['block', () => operator.block('k', 1000)],
      ['unblock', () => operator.unblock('k')],
      ['penalty', () => operator.penalty('k', 1)],
      ['reward', () => operator.reward('k', 1)],
      ['invalidate', () => operator.invalidate('k')],
      ['reset', () => limiter.reset('k')],
    ];
    for (const [operation, run] of steps) {
      await heartbeat.beat(); // the first beat runs at creation: let it settle before counting
      await admin.config('RESETSTAT');
      const before = await samples({ 'sluice.operation': operation });
      await run();
      const ran = await scriptCalls(admin);
      expect(ran, operation).toBeGreaterThan(0);
      expect((await samples({ 'sluice.operation': operation })) - before, operation).toBe(ran);
    }
    const points = await metrics.collect();
    // The three same-tick decisions went in one call: one batch-size sample of 3.
    const batchSizes = points.filter((p) => p.name === METRICS.batchSize && p.attributes['sluice.limit'] === 'ops');
    expect(batchSizes.map((p) => [p.count, p.sum])).toEqual([[1, 3]]);
    expect(metrics.totalOf(points, METRICS.storeErrors, { 'sluice.limit': 'ops' })).toBe(0);
    await heartbeat.close();
  });

  it('errors by kind: a client timeout, a refused connection, an error reply', async () => {
    const wrapClient = storeMetrics({ meter: metrics.meter, name: 'errors' });
    const algorithm = gcra({ limit: 10, periodMs: HOUR });
    const timingOut = createRedisLimiter({ client: client({ commandTimeout: 100 }), algorithm, wrapClient });
    await timingOut.limit('k'); // connected and the script cached, so the paused call is the only one
    redis.pause();
    try {
      await expect(timingOut.limit('k')).rejects.toBeInstanceOf(StoreUnavailableError);
    } finally {
      redis.resume();
    }
    const closedPort = createRedisLimiter({
      client: client({ port: await freePort(), lazyConnect: true, enableOfflineQueue: false }),
      algorithm,
      wrapClient,
    });
    await expect(closedPort.limit('k')).rejects.toBeInstanceOf(StoreUnavailableError);
    await admin.acl('SETUSER', 'no-scripts', 'on', 'nopass', '~*', '+@all', '-evalsha', '-eval');
    const forbidden = createRedisLimiter({
      client: client({ username: 'no-scripts', password: 'any' }),
      algorithm,
      wrapClient,
    });
    await expect(forbidden.limit('k')).rejects.toBeInstanceOf(StoreUnavailableError); // NOPERM

    const points = await metrics.collect();
    for (const kind of ['timeout', 'connection', 'script-error']) {
      const match = { 'sluice.limit': 'errors', 'sluice.operation': 'decide', 'sluice.error.kind': kind };
      expect(metrics.totalOf(points, METRICS.storeErrors, match), kind).toBe(1);
      expect(metrics.totalOf(points, METRICS.storeDuration, match), kind).toBe(1);
    }
    expect(metrics.totalOf(points, METRICS.storeErrors, { 'sluice.limit': 'errors' })).toBe(3);
  });
});

import { once } from 'node:events';
import type { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gcra } from '../../src/algorithms/gcra.js';
import { METRICS, storeMetrics } from '../../src/observability/index.js';
import { createRedisLimiter, keySlot } from '../../src/stores/redis/index.js';
import { perNodeScript } from '../../src/stores/redis/scripts/compose.js';
import { gcraScript } from '../../src/stores/redis/scripts/gcra.js';
import { scriptCallsBetween, serverStats } from '../scale/support.js';
import { startCluster, type TestCluster } from '../support/cluster.js';
import { createMeters } from './support/metrics.js';

/*
 * Per-master batching (`batch.byNode`) on a real 3-master Redis Cluster: each per-master round
 * trip is one `sluice.store.duration` sample and one `sluice.store.batch.size` sample, as many
 * as the masters themselves count script calls (INFO commandstats).
 */
let cluster: TestCluster;
let client: Cluster;

beforeAll(async () => {
  cluster = await startCluster({ masters: 3 });
  // The script cached on every master: no NOSCRIPT retry adds a server-side call.
  for (const master of cluster.masters) await master.admin.script('LOAD', perNodeScript(gcraScript).source);
  client = cluster.connect();
  if (client.status !== 'ready') await once(client, 'ready');
});

afterAll(async () => {
  await cluster?.stop();
});

describe('storeMetrics with batch.byNode on a Redis Cluster', () => {
  it('times every per-master round trip and records its decisions per call', async () => {
    const metrics = createMeters();
    const { meter, collect, totalOf } = metrics;
    const prefix = 'bynode:';
    const limiter = createRedisLimiter({
      client,
      algorithm: gcra({ limit: 5, periodMs: 60_000 }),
      prefix,
      batch: { byNode: true },
      wrapClient: storeMetrics({ meter, name: 'cluster' }),
    });
    // 30 keys over many slots: one turn gives one call per master that serves any of them.
    const ids = Array.from({ length: 30 }, (_, i) => `user:${i}`);
    const masters = new Set(ids.map((id) => client.slots[keySlot(`${prefix}{${id}}`)]?.[0])).size;
    expect(masters).toBe(3);
    const nodes = cluster.masters.map((master) => master.admin);

    const before = await serverStats(nodes);
    const decisions = await Promise.all(ids.map((id) => limiter.limit(id)));
    const calls = scriptCallsBetween(before, await serverStats(nodes));
    expect(decisions.every((decision) => decision.allowed)).toBe(true);
    expect(calls).toBe(3);

    const points = await collect();
    const batch = { 'sluice.limit': 'cluster', 'sluice.operation': 'batch' };
    expect(totalOf(points, METRICS.storeDuration, batch)).toBe(calls);
    expect(totalOf(points, METRICS.batchSize, batch)).toBe(calls);
    const sizes = points.filter((p) => p.name === METRICS.batchSize);
    expect(sizes.map((p) => p.sum)).toEqual([ids.length]);
    expect(totalOf(points, METRICS.storeErrors)).toBe(0);
    await limiter.close?.();
    await metrics.shutdown();
  });
});

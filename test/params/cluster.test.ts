import { once } from 'node:events';
import type { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedWindow, gcra } from '../../src/index.js';
import { type BatchOptions, createRedisLimiter } from '../../src/stores/redis/index.js';
import { startCluster, type TestCluster } from '../support/cluster.js';

/* Per-call params on a real 3-master Redis Cluster: unbatched, batched per slot, batched per master. */

let cluster: TestCluster;
let client: Cluster;
beforeAll(async () => {
  cluster = await startCluster({ masters: 3 });
  client = cluster.connect();
  if (client.status !== 'ready') await once(client, 'ready');
});
afterAll(() => cluster.stop());

const modes: [string, boolean | BatchOptions | undefined][] = [
  ['unbatched', undefined],
  ['batched per slot', true],
  ['batched per master', { byNode: true }],
];

describe.each(modes)('per-call params on a Cluster, %s', (mode, batch) => {
  it('keys across every master, each under its plan, mixed in one turn', async () => {
    const limiter = createRedisLimiter({
      client,
      algorithm: fixedWindow({ limit: 2, windowMs: 60_000 }),
      prefix: `cluster-params:${mode}:`,
      onWarning: false,
      ...(batch === undefined ? {} : { batch }),
    });
    const keys = Array.from({ length: 30 }, (_, i) => `user:${i}`);
    const planOf = (i: number) => (i % 2 === 0 ? { limit: 2 } : { limit: 5 });
    // 6 calls per key, all in one turn, plans alternating between keys.
    const calls = keys.flatMap((key, i) => Array.from({ length: 6 }, () => limiter.limit(key, { params: planOf(i) })));
    const decisions = await Promise.all(calls);
    keys.forEach((_, i) => {
      const mine = decisions.slice(6 * i, 6 * i + 6);
      const limit = planOf(i).limit;
      expect(mine.map((d) => d.allowed)).toEqual(Array.from({ length: 6 }, (_, n) => n < limit));
      expect(mine.every((d) => d.limit === limit)).toBe(true);
    });
    await limiter.close();
  });

  it('a GCRA downgrade read under the new numbers, as on one node', async () => {
    const limiter = createRedisLimiter({
      client,
      algorithm: gcra({ limit: 100, periodMs: 60_000 }),
      prefix: `cluster-down:${mode}:`,
      onWarning: false,
      clock: () => 1_700_000_010_000,
      ...(batch === undefined ? {} : { batch }),
    });
    expect((await limiter.limit('u', { cost: 500, params: { limit: 1_000 } })).allowed).toBe(true);
    expect(await limiter.peek('u')).toMatchObject({ allowed: true, remaining: 50, limit: 100 });
    await limiter.close();
  });
});

import { once } from 'node:events';
import type { Cluster } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { createShardedLimiter, gcra } from '../../src/index.js';
import { createRedisLimiter, defineScript, keySlot, runScript, toScriptClient } from '../../src/stores/redis/index.js';
import { redisKeyName } from '../../src/stores/redis/key-name.js';
import { gcraScript } from '../../src/stores/redis/scripts/gcra.js';
import { manualClock } from '../../src/testing/index.js';
import { clusterSuite } from './cluster-suite.js';
import { itDecidesRandomIdentifiersBySlot } from './slots.js';
import { errorsBetween, scriptCallsBetween, serverStats } from './support.js';

const suite = clusterSuite('redis', 'Redis Cluster');
const cluster = () => suite.cluster();
const masterStats = () => serverStats(cluster().masters.map((master) => master.admin));

/** A Cluster client that knows the slot map, against masters that have the script cached: no MOVED, no NOSCRIPT. */
async function readyClient(): Promise<Cluster> {
  for (const master of cluster().masters) await master.admin.script('LOAD', gcraScript.source);
  const client = cluster().connect();
  if (client.status !== 'ready') await once(client, 'ready');
  return client;
}

describe('Redis Cluster: slots', () => {
  itDecidesRandomIdentifiersBySlot(cluster, readyClient);

  it('routes identifiers starting with "}" straight to their slot with both clients', async () => {
    // Stored as `p:{%7Dx}`: a non-empty hash tag, on which Redis and cluster-key-slot (which
    // both clients route by) agree, so no call is redirected.
    const ids = Array.from({ length: 30 }, (_, i) => `}${i}`);
    for (const [name, client] of [
      ['ioredis', suite.clients().ioredis[2]],
      ['node-redis', suite.clients().nodeRedis[2]],
    ] as const) {
      const prefix = `brace:${name}:`;
      const clock = manualClock();
      const limiter = createRedisLimiter({
        client,
        algorithm: gcra({ limit: 2, periodMs: 60_000 }),
        prefix,
        clock: clock.now,
      });
      const before = await masterStats();
      for (const id of ids) {
        expect((await limiter.limit(id, { cost: 2 })).allowed).toBe(true);
        expect((await limiter.limit(id)).allowed).toBe(false);
        const stored = redisKeyName(prefix, id);
        expect(
          await (await cluster().ownerOf(keySlot(stored))).admin.exists(stored),
          'stored where Redis hashes it',
        ).toBe(1);
      }
      expect(errorsBetween(before, await masterStats(), 'MOVED'), `${name} is routed right`).toBe(0);
    }
  });

  it('routes a script call naming a key with an empty hash tag right through node-redis', async () => {
    // `p:{}x}`: Redis hashes the whole key, cluster-key-slot 1.1 only 'x'; node-redis would loop
    // on MOVED, so its adapter names a stand-in key of the right slot.
    const client = toScriptClient(suite.clients().nodeRedis[2]);
    const set = await defineScript("return redis.call('SET', KEYS[1], '1')");
    const before = await masterStats();
    for (let i = 0; i < 30; i++) {
      const key = `raw:{}${i}}`;
      await runScript(client, set, [key], []);
      expect(await (await cluster().ownerOf(keySlot(key))).admin.exists(key), key).toBe(1);
    }
    expect(errorsBetween(before, await masterStats(), 'MOVED')).toBe(0);
  });

  it('sends 1,000 decisions of one hot key in ⌈1000 / maxDecisions⌉ calls, admitting exactly the limit', async () => {
    const clock = manualClock();
    const limiter = createRedisLimiter({
      client: await readyClient(),
      algorithm: gcra({ limit: 100, periodMs: 60_000 }),
      prefix: 'hot:',
      clock: clock.now,
      batch: { maxDecisions: 250 },
    });
    const before = await masterStats();
    const decisions = await Promise.all(Array.from({ length: 1000 }, () => limiter.limit('one-key')));
    const after = await masterStats();
    expect(decisions.filter((d) => d.allowed)).toHaveLength(100);
    expect(decisions.slice(0, 100).every((d) => d.allowed)).toBe(true);
    expect(scriptCallsBetween(before, after)).toBe(4);
  });
});

describe('Redis Cluster: hot-key sharding', () => {
  it('spreads one hot key over all 3 masters and admits exactly the split burst', async () => {
    const clock = manualClock();
    const prefix = 'sharded:';
    const limiter = createShardedLimiter({
      algorithm: gcra({ limit: 800, periodMs: 1000 }),
      shards: 8,
      create: (algorithm) =>
        createRedisLimiter({ client: suite.clients().ioredis[3], algorithm, prefix, clock: clock.now, batch: true }),
    });
    const decisions = await Promise.all(Array.from({ length: 1000 }, () => limiter.limit('hot')));
    expect(decisions.filter((d) => d.allowed)).toHaveLength(800);
    const owners = new Set<number>();
    for (let shard = 0; shard < 8; shard++) {
      const key = `${prefix}{hot#${shard}}`;
      const owner = await cluster().ownerOf(keySlot(key));
      expect(await owner.admin.exists(key)).toBe(1);
      owners.add(owner.port);
    }
    expect(owners.size).toBe(3);
  });
});

import { once } from 'node:events';
import type { Cluster } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { createShardedLimiter, gcra } from '../../src/index.js';
import { createRedisLimiter, keySlot } from '../../src/stores/redis/index.js';
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

  it('decides identifiers starting with "}" (an empty hash tag) right with both clients', async () => {
    // `p:{}x}` has an empty hash tag, so Redis hashes the whole key; cluster-key-slot 1.1.x,
    // which both clients use to route, hashes 'x' instead. ioredis follows MOVED (one extra
    // round trip); node-redis would loop on MOVED until it fails, so its adapter names a
    // stand-in key of the right slot.
    const ids = Array.from({ length: 30 }, (_, i) => `}${i}`);
    for (const [name, client, movedExpected] of [
      ['ioredis', suite.clients().ioredis[2], true],
      ['node-redis', suite.clients().nodeRedis[2], false],
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
        const owner = await cluster().ownerOf(keySlot(`${prefix}{${id}}`));
        expect(await owner.admin.exists(`${prefix}{${id}}`), 'stored where Redis hashes it').toBe(1);
      }
      const moved = errorsBetween(before, await masterStats(), 'MOVED');
      if (movedExpected) expect(moved, `${name} is redirected`).toBeGreaterThan(0);
      else expect(moved, `${name} is routed right`).toBe(0);
    }
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

import type { Redis } from 'ioredis';
import type { Redis as Valkey } from 'iovalkey';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServerKind } from '../support/redis-server.js';
import { startSentinel, type TestSentinel } from '../support/sentinel.js';
import { runThroughFailover } from './failover.js';
import { connectNodeRedisSentinel, type NodeRedisSentinel } from './node-redis.js';
import { runRedisConformance } from './support.js';

/**
 * What every Sentinel set-up runs, whatever the server: starts a master, a replica and three
 * sentinels of `server`, runs the conformance suite through 4 connections of ioredis, iovalkey
 * and node-redis each, then one `SENTINEL FAILOVER` under traffic from all three clients
 * (ioredis and iovalkey with and without `failoverDetector`). `title` names the set-up in test
 * names. The getter is read inside tests, once `beforeAll` has run.
 */
export function sentinelSuite(server: ServerKind, title: string): () => TestSentinel {
  let setup: TestSentinel;
  let ioredis: Redis[];
  let valkey: Valkey[];
  let nodeRedis: NodeRedisSentinel[];

  beforeAll(async () => {
    setup = await startSentinel({ server });
    const four = [0, 1, 2, 3];
    ioredis = four.map(() => setup.connect({ maxRetriesPerRequest: 1 }));
    valkey = four.map(() => setup.connectValkey({ maxRetriesPerRequest: 1 }));
    nodeRedis = await Promise.all(four.map(() => connectNodeRedisSentinel(setup)));
  });

  afterAll(async () => {
    await Promise.all(nodeRedis?.map((client) => client.close()) ?? []);
    await setup?.stop();
  });

  runRedisConformance([
    { name: `ioredis via ${title}`, prefix: 'ioredis', clients: () => ioredis },
    { name: `iovalkey via ${title}`, prefix: 'iovalkey', clients: () => valkey },
    { name: `node-redis createSentinel via ${title}`, prefix: 'node-redis', clients: () => nodeRedis },
  ]);

  describe(`${title}: SENTINEL FAILOVER in the middle of a run`, () => {
    it('resumes on the new master through NOSCRIPT; the writes lost to asynchronous replication are counted, bounded to the failover, and fewer with failoverDetector', async () => {
      const nodeRedisClient = await connectNodeRedisSentinel(setup);
      try {
        const lost = await runThroughFailover(setup, [
          ['ioredis (defaults)', setup.connect()],
          ['ioredis (failoverDetector: true)', setup.connect({ failoverDetector: true })],
          ['iovalkey (defaults)', setup.connectValkey()],
          ['iovalkey (failoverDetector: true)', setup.connectValkey({ failoverDetector: true })],
          ['node-redis createSentinel', nodeRedisClient],
        ]);
        for (const client of ['ioredis', 'iovalkey']) {
          expect(lost.get(`${client} (failoverDetector: true)`), client).toBeLessThan(
            lost.get(`${client} (defaults)`) as number,
          );
        }
      } finally {
        await nodeRedisClient.close();
      }
    }, 90_000);
  });

  return () => setup;
}

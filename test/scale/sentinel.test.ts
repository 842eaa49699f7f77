import type { Redis } from 'ioredis';
import type { Redis as Valkey } from 'iovalkey';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSentinel, type TestSentinel } from '../support/sentinel.js';
import { runThroughFailover } from './failover.js';
import { connectNodeRedisSentinel, type NodeRedisSentinel } from './node-redis.js';
import { runRedisConformance } from './support.js';

let setup: TestSentinel;
let ioredis: Redis[];
let nodeRedis: NodeRedisSentinel[];
let valkey: Valkey[];

beforeAll(async () => {
  setup = await startSentinel();
  ioredis = [0, 1, 2, 3].map(() => setup.connect({ maxRetriesPerRequest: 1 }));
  nodeRedis = await Promise.all([0, 1, 2, 3].map(() => connectNodeRedisSentinel(setup)));
  valkey = [0, 1, 2, 3].map(() => setup.connectValkey({ maxRetriesPerRequest: 1 }));
});

afterAll(async () => {
  await Promise.all(nodeRedis?.map((client) => client.close()) ?? []);
  await setup?.stop();
});

runRedisConformance([
  { name: 'ioredis via Sentinel', prefix: 'ioredis', clients: () => ioredis },
  { name: 'node-redis createSentinel', prefix: 'node-redis', clients: () => nodeRedis },
  { name: 'iovalkey via Sentinel', prefix: 'iovalkey', clients: () => valkey },
]);

describe('Sentinel: SENTINEL FAILOVER in the middle of a run', () => {
  it('resumes on the new master through NOSCRIPT; the writes lost to asynchronous replication are counted and bounded to the failover', async () => {
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

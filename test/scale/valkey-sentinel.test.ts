import { Redis } from 'ioredis';
import type { Redis as Valkey } from 'iovalkey';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSentinel, type TestSentinel } from '../support/sentinel.js';
import { runThroughFailover } from './failover.js';
import { connectNodeRedisSentinel, type NodeRedisSentinel } from './node-redis.js';
import { runRedisConformance } from './support.js';

// A valkey-server 8 master and replica watched by three Valkey sentinels (`valkey-server --sentinel`).
let setup: TestSentinel;
let ioredis: Redis[];
let valkey: Valkey[];
let nodeRedis: NodeRedisSentinel[];

beforeAll(async () => {
  setup = await startSentinel({ server: 'valkey' });
  ioredis = [0, 1, 2, 3].map(() => setup.connect({ maxRetriesPerRequest: 1 }));
  valkey = [0, 1, 2, 3].map(() => setup.connectValkey({ maxRetriesPerRequest: 1 }));
  nodeRedis = await Promise.all([0, 1, 2, 3].map(() => connectNodeRedisSentinel(setup)));
});

afterAll(async () => {
  await Promise.all(nodeRedis?.map((client) => client.close()) ?? []);
  await setup?.stop();
});

runRedisConformance([
  { name: 'iovalkey via Valkey 8 Sentinel', prefix: 'iovalkey', clients: () => valkey },
  { name: 'ioredis via Valkey 8 Sentinel', prefix: 'ioredis', clients: () => ioredis },
  { name: 'node-redis createSentinel via Valkey 8 Sentinel', prefix: 'node-redis', clients: () => nodeRedis },
]);

describe('Valkey 8 Sentinel: SENTINEL FAILOVER in the middle of a run', () => {
  it('runs valkey-server 8 data nodes and sentinels', async () => {
    for (const { admin } of setup.nodes) expect(await admin.info('server')).toMatch(/^valkey_version:8\./m);
    for (const { host, port } of setup.sentinels) {
      const sentinel = new Redis({ host, port });
      const info = await sentinel.info('server');
      sentinel.disconnect();
      expect(info).toMatch(/^valkey_version:8\./m);
      expect(info).toMatch(/^server_mode:sentinel\r?$/m);
    }
  });

  it('ioredis, iovalkey and node-redis resume on the new master through NOSCRIPT; lost writes are bounded to the failover, fewer with failoverDetector', async () => {
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

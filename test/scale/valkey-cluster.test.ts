import { once } from 'node:events';
import type { Cluster } from 'ioredis';
import { Cluster as ValkeyCluster } from 'iovalkey';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCluster, type TestCluster } from '../support/cluster.js';
import { describeLeasingNestedLimitsAndHeartbeat, runLeasedConformance } from './cluster-leasing.js';
import { connectNodeRedisCluster, type NodeRedisCluster } from './node-redis.js';
import { describeSlotMoveDuringRun } from './slot-move.js';
import { itDecidesRandomIdentifiersBySlot } from './slots.js';
import { runRedisConformance } from './support.js';

// A 3-master valkey-server 8 cluster made by `valkey-cli --cluster create`.
let cluster: TestCluster;
let ioredis: Cluster[];
let valkey: ValkeyCluster[];
let nodeRedis: NodeRedisCluster[];
const opened: ValkeyCluster[] = [];

/** A new iovalkey Cluster client, disconnected in `afterAll`. */
function connectValkey(): ValkeyCluster {
  const client = new ValkeyCluster(cluster.startupNodes as { host: string; port: number }[]);
  client.on('error', () => {});
  opened.push(client);
  return client;
}

beforeAll(async () => {
  cluster = await startCluster({ masters: 3, server: 'valkey' });
  ioredis = [0, 1, 2, 3].map(() => cluster.connect());
  valkey = [0, 1, 2, 3].map(connectValkey);
  nodeRedis = await Promise.all([0, 1, 2, 3].map(() => connectNodeRedisCluster(cluster)));
});

afterAll(async () => {
  await Promise.all(nodeRedis?.map((client) => client.close()) ?? []);
  for (const client of opened) client.disconnect();
  await cluster?.stop();
});

// held() hides that a client is a Cluster client, so batched targets ask for slot grouping themselves.
runRedisConformance([
  { name: 'ioredis Cluster on Valkey 8, 3 masters', prefix: 'ioredis', clients: () => ioredis },
  {
    name: 'ioredis Cluster on Valkey 8, 3 masters, batched',
    prefix: 'ioredis-batched',
    clients: () => ioredis,
    batch: { bySlot: true },
  },
  { name: 'iovalkey Cluster on Valkey 8, 3 masters', prefix: 'iovalkey', clients: () => valkey },
  {
    name: 'iovalkey Cluster on Valkey 8, 3 masters, batched',
    prefix: 'iovalkey-batched',
    clients: () => valkey,
    batch: { bySlot: true },
  },
  { name: 'node-redis createCluster on Valkey 8, 3 masters', prefix: 'node-redis', clients: () => nodeRedis },
  {
    name: 'node-redis createCluster on Valkey 8, 3 masters, batched',
    prefix: 'node-redis-batched',
    clients: () => nodeRedis,
    batch: { bySlot: true },
  },
]);

describe('Valkey 8 Cluster: slots', () => {
  it('is a cluster of 3 valkey-server 8 masters', async () => {
    for (const master of cluster.masters) {
      expect(await master.admin.info('server')).toMatch(/^valkey_version:8\./m);
      expect(await master.admin.cluster('INFO')).toMatch(/^cluster_size:3\r?$/m);
    }
  });

  // Through iovalkey's Cluster client, once it knows the slot map.
  itDecidesRandomIdentifiersBySlot(
    () => cluster,
    async () => {
      const client = connectValkey();
      if (client.status !== 'ready') await once(client, 'ready');
      return client;
    },
  );
});

describeLeasingNestedLimitsAndHeartbeat('Valkey 8 Cluster', () => cluster);

runLeasedConformance('leased limiter, leaseSize 1, over ioredis Cluster on Valkey 8', () => ioredis);

describeSlotMoveDuringRun('Valkey 8 Cluster', () => cluster, [
  { name: 'ioredis Cluster', clients: () => ioredis },
  { name: 'node-redis createCluster', clients: () => nodeRedis },
  { name: 'iovalkey Cluster', clients: () => valkey },
]);

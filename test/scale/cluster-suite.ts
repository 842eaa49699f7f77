import type { Cluster } from 'ioredis';
import type { Cluster as ValkeyCluster } from 'iovalkey';
import { afterAll, beforeAll } from 'vitest';
import { startCluster, type TestCluster } from '../support/cluster.js';
import type { ServerKind } from '../support/redis-server.js';
import { describeLeasingNestedLimitsAndHeartbeat, runLeasedConformance } from './cluster-leasing.js';
import { connectNodeRedisCluster, type NodeRedisCluster } from './node-redis.js';
import { describeSlotMoveDuringRun } from './slot-move.js';
import { runRedisConformance } from './support.js';

/** Connections 0..3 of each client kind to a test cluster. */
export interface ClusterClients {
  ioredis: Cluster[];
  nodeRedis: NodeRedisCluster[];
  iovalkey: ValkeyCluster[];
}

/**
 * What every 3-master test cluster runs, whatever the server: starts the cluster of `server`,
 * opens 4 connections of each client, and registers the conformance suite through each client
 * plain and batched by slot, the leased limiter's conformance, leasing, nested limits and the
 * heartbeat, and a slot moved mid-run. `title` names the cluster in test names. The getters
 * are read inside tests, once `beforeAll` has run.
 */
export function clusterSuite(
  server: ServerKind,
  title: string,
): { cluster: () => TestCluster; clients: () => ClusterClients } {
  let cluster: TestCluster;
  let clients: ClusterClients;

  beforeAll(async () => {
    cluster = await startCluster({ masters: 3, server });
    const four = [0, 1, 2, 3];
    clients = {
      ioredis: four.map(() => cluster.connect()),
      nodeRedis: await Promise.all(four.map(() => connectNodeRedisCluster(cluster))),
      iovalkey: four.map(() => cluster.connectValkey()),
    };
  });

  afterAll(async () => {
    await Promise.all(clients?.nodeRedis.map((client) => client.close()) ?? []);
    await cluster?.stop();
  });

  const kinds = [
    ['ioredis Cluster', 'ioredis', () => clients.ioredis],
    ['node-redis createCluster', 'node-redis', () => clients.nodeRedis],
    ['iovalkey Cluster', 'iovalkey', () => clients.iovalkey],
  ] as const;
  // held() hides that a client is a Cluster client, so batched targets ask for slot grouping
  // themselves: every call's keys then share one slot (no CROSSSLOT).
  runRedisConformance(
    kinds.flatMap(([name, prefix, of]) => [
      { name: `${name} on ${title}`, prefix, clients: of },
      { name: `${name} on ${title}, batched`, prefix: `${prefix}-batched`, clients: of, batch: { bySlot: true } },
    ]),
  );
  runLeasedConformance(`leased limiter, leaseSize 1, over ioredis Cluster on ${title}`, () => clients.ioredis);
  describeLeasingNestedLimitsAndHeartbeat(title, () => cluster);
  describeSlotMoveDuringRun(
    title,
    () => cluster,
    kinds.map(([name, , of]) => ({ name, clients: of })),
  );

  return { cluster: () => cluster, clients: () => clients };
}

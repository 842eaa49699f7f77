import { createCluster, createSentinel } from 'redis';
import type { TestCluster } from '../support/cluster.js';
import type { TestSentinel } from '../support/sentinel.js';

export type NodeRedisCluster = ReturnType<typeof createCluster>;
export type NodeRedisSentinel = ReturnType<typeof createSentinel>;

/** A connected node-redis `createCluster` client on `cluster`'s masters (Redis or Valkey); the caller closes it. */
export async function connectNodeRedisCluster(cluster: TestCluster): Promise<NodeRedisCluster> {
  const client = createCluster({
    rootNodes: cluster.startupNodes.map(({ host, port }) => ({ url: `redis://${host}:${port}` })),
  });
  client.on('error', () => {});
  await client.connect();
  return client;
}

/** A connected node-redis `createSentinel` client on `setup`'s sentinels (Redis or Valkey); the caller closes it. */
export async function connectNodeRedisSentinel(setup: TestSentinel): Promise<NodeRedisSentinel> {
  const client = createSentinel({ name: setup.name, sentinelRootNodes: [...setup.sentinels] });
  client.on('error', () => {});
  await client.connect();
  return client;
}

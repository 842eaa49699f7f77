import { ConfigError } from '../../errors.js';
import { fromIoredis, ioredisClusterNodes, isIoredis, isIoredisCluster } from './clients/ioredis.js';
import { fromNodeRedis, isNodeRedis, isNodeRedisCluster, nodeRedisClusterNodes } from './clients/node-redis.js';
import type { ClusterNodes } from './cluster-send.js';
import type { ScriptClient } from './script.js';

export { fromIoredis, type IoredisLike } from './clients/ioredis.js';
export { fromNodeRedis, type NodeRedisEvalOptions, type NodeRedisLike } from './clients/node-redis.js';

/**
 * The one place that tells clients apart. Accepts an ioredis or iovalkey client (`Redis`,
 * `Redis` with `sentinels`, `Cluster`), a node-redis client (`createClient`, `createCluster`,
 * `createSentinel`), or a {@link ScriptClient} (returned as is).
 * @throws {ConfigError} when `client` is none of these.
 * @example
 * ```ts
 * import { createCluster } from 'redis';
 * import { defineScript, runScript, toScriptClient } from 'sluice/redis';
 *
 * const cluster = await createCluster({ rootNodes: [{ url: 'redis://127.0.0.1:7000' }] }).connect();
 * const client = toScriptClient(cluster); // any client Sluice accepts, as one shape
 * const touch = await defineScript("return redis.call('PEXPIRE', KEYS[1], ARGV[1])");
 * await runScript(client, touch, ['{user:42}:session'], [60_000]);
 * ```
 */
export function toScriptClient(client: unknown): ScriptClient {
  if (typeof client === 'object' && client !== null) {
    if (isIoredis(client)) return fromIoredis(client);
    if (isNodeRedis(client)) return fromNodeRedis(client);
    const candidate = client as Partial<ScriptClient>;
    if (typeof candidate.evalsha === 'function' && typeof candidate.eval === 'function') return client as ScriptClient;
  }
  throw new ConfigError('client must be an ioredis, iovalkey or node-redis client, or a ScriptClient');
}

/**
 * Whether `client` is a Redis Cluster client (ioredis/iovalkey `Cluster`, node-redis
 * `createCluster`), whose multi-key script calls must keep every key in one hash slot.
 * A {@link ScriptClient} cannot say; it counts as not clustered.
 * @example
 * ```ts
 * import { Cluster } from 'ioredis';
 * import { isClusterClient } from 'sluice/redis';
 *
 * isClusterClient(new Cluster([{ host: '127.0.0.1', port: 7000 }])); // true
 * ```
 */
export function isClusterClient(client: unknown): boolean {
  if (typeof client !== 'object' || client === null) return false;
  return isIoredisCluster(client) || isNodeRedisCluster(client);
}

/**
 * The slot map and master connections of a Cluster client (ioredis/iovalkey `Cluster`,
 * node-redis `createCluster`), for per-master batching; undefined for any other client.
 */
export function clusterNodesOf(client: unknown): ClusterNodes | undefined {
  if (typeof client !== 'object' || client === null) return undefined;
  return ioredisClusterNodes(client) ?? nodeRedisClusterNodes(client);
}

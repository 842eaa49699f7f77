import type { ClusterNodes } from '../batch.js';
import type { ScriptClient } from '../script.js';

/**
 * The shape of an ioredis or iovalkey client Sluice uses: `Redis` (single node, or a master
 * found through Sentinel) and `Cluster` alike, both taking `numKeys, ...keys, ...args`.
 */
export interface IoredisLike {
  evalsha(sha: string, numKeys: number, ...keysAndArgs: (string | number)[]): Promise<unknown>;
  eval(source: string, numKeys: number, ...keysAndArgs: (string | number)[]): Promise<unknown>;
}

/** The same client seen as taking arrays: both flatten one level of array arguments (their typings' `keys: RedisKey[]` form). */
interface ArrayTaking {
  evalsha(sha: string, numKeys: number, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown>;
  eval(source: string, numKeys: number, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown>;
}

/**
 * Adapts an ioredis/iovalkey client. A `Cluster` routes each call by its first key.
 * @example
 * ```ts
 * import { Redis } from 'ioredis';
 * import { defineScript, fromIoredis, runScript } from 'sluice/redis';
 *
 * const client = fromIoredis(new Redis());
 * const ping = await defineScript("return redis.call('PING')");
 * await runScript(client, ping, [], []);
 * ```
 */
export function fromIoredis(ioredis: IoredisLike): ScriptClient {
  // The arrays as they are, not spread: the client flattens them anyway, and a spread call
  // would copy every argument once more on each decision.
  const client = ioredis as unknown as ArrayTaking;
  return {
    evalsha: (sha, keys, args) => client.evalsha(sha, keys.length, keys, args),
    eval: (source, keys, args) => client.eval(source, keys.length, keys, args),
  };
}

/** Whether `client` looks like an ioredis/iovalkey client (`Redis` carries `options`, `Cluster` `isCluster`). */
export function isIoredis(client: object): client is IoredisLike {
  const candidate = client as { evalsha?: unknown; eval?: unknown };
  return (
    typeof candidate.evalsha === 'function' &&
    typeof candidate.eval === 'function' &&
    ('options' in client || 'isCluster' in client)
  );
}

/** Whether an ioredis/iovalkey client is a `Cluster`. */
export function isIoredisCluster(client: object): boolean {
  return (client as { isCluster?: unknown }).isCluster === true;
}

/** What Sluice reads of an ioredis/iovalkey `Cluster` to send a call to one master itself. */
interface IoredisClusterLike {
  /** Slot → node keys (`host:port`), master first: the client's current slot map. */
  slots: (readonly string[] | undefined)[];
  /** The client's connection to each master: a plain client, which follows no redirection. */
  nodes(role: 'master'): (IoredisLike & { options: { host?: string; port?: number } })[];
}

/** The slot map and master connections of an ioredis/iovalkey `Cluster`, or undefined for another client. */
export function ioredisClusterNodes(client: object): ClusterNodes | undefined {
  if (!isIoredisCluster(client)) return undefined;
  const cluster = client as IoredisClusterLike;
  return {
    masterOf: (slot) => cluster.slots[slot]?.[0],
    connectionTo(master) {
      const node = cluster.nodes('master').find(({ options }) => `${options.host}:${options.port}` === master);
      return node && fromIoredis(node);
    },
  };
}

import type { ScriptClient } from '../script.js';

/**
 * The shape of an ioredis or iovalkey client Sluice uses: `Redis` (single node, or a master
 * found through Sentinel) and `Cluster` alike, both taking `numKeys, ...keys, ...args`.
 */
export interface IoredisLike {
  evalsha(sha: string, numKeys: number, ...keysAndArgs: (string | number)[]): Promise<unknown>;
  eval(source: string, numKeys: number, ...keysAndArgs: (string | number)[]): Promise<unknown>;
}

/** Adapts an ioredis/iovalkey client. A `Cluster` routes each call by its first key. */
export function fromIoredis(client: IoredisLike): ScriptClient {
  return {
    evalsha: (sha, keys, args) => client.evalsha(sha, keys.length, ...keys, ...args),
    eval: (source, keys, args) => client.eval(source, keys.length, ...keys, ...args),
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

import { ConfigError } from '../../errors.js';
import type { ScriptClient } from './script.js';

/** The shape of an ioredis (or iovalkey) `Redis` or `Cluster` client that Sluice uses. */
export interface IoredisLike {
  evalsha(sha: string, numKeys: number, ...keysAndArgs: (string | number)[]): Promise<unknown>;
  eval(source: string, numKeys: number, ...keysAndArgs: (string | number)[]): Promise<unknown>;
}

/** Adapts an ioredis-style client (positional `numKeys, ...keys, ...args`). */
export function fromIoredis(client: IoredisLike): ScriptClient {
  return {
    evalsha: (sha, keys, args) => client.evalsha(sha, keys.length, ...keys, ...args),
    eval: (source, keys, args) => client.eval(source, keys.length, ...keys, ...args),
  };
}

/**
 * Accepts either a {@link ScriptClient} or an ioredis-style client.
 * @throws {ConfigError} when `client` is neither.
 */
export function toScriptClient(client: unknown): ScriptClient {
  const candidate = client as { evalsha?: unknown; eval?: unknown; options?: unknown; isCluster?: unknown } | null;
  if (candidate && typeof candidate.evalsha === 'function' && typeof candidate.eval === 'function') {
    // ioredis clients carry `options` (Redis) or `isCluster` (Cluster); a ScriptClient carries neither.
    if ('options' in candidate || 'isCluster' in candidate) return fromIoredis(client as IoredisLike);
    return client as ScriptClient;
  }
  throw new ConfigError('client must be an ioredis/iovalkey client or a ScriptClient');
}

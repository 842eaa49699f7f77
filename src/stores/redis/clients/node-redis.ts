import type { ClusterNodes } from '../batch.js';
import { hashTagForSlot, keySlot } from '../keyslot.js';
import type { ScriptClient } from '../script.js';

/** Options of node-redis's `evalSha` / `eval`: keys and arguments as strings. */
export interface NodeRedisEvalOptions {
  keys: string[];
  arguments: string[];
}

/**
 * The shape of a node-redis (v5, package `redis`) client Sluice uses: `createClient()` and
 * `createSentinel()` carry `evalSha(sha, { keys, arguments })`; `createCluster()` too, and
 * `sendCommand(firstKey, isReadonly, args)`, which Sluice uses to route each call itself.
 */
export interface NodeRedisLike {
  evalSha(sha: string, options: NodeRedisEvalOptions): Promise<unknown>;
  eval(source: string, options: NodeRedisEvalOptions): Promise<unknown>;
}

/** A master in node-redis's slot map. */
interface NodeRedisMaster {
  host: string;
  port: number;
}

/** The routing entry of node-redis's `createCluster()` client, its slot map and its master connections. */
export interface NodeRedisClusterLike extends NodeRedisLike {
  sendCommand(firstKey: string | undefined, isReadonly: boolean | undefined, args: string[]): Promise<unknown>;
  readonly slots: readonly ({ master: NodeRedisMaster } | undefined)[];
  readonly masters: readonly NodeRedisMaster[];
  /** The client's connection to one node: a plain client, which follows no redirection. */
  nodeClient(node: NodeRedisMaster): Promise<{ sendCommand(args: string[]): Promise<unknown> }>;
}

/**
 * Adapts a node-redis client. node-redis sends only string arguments, so numbers are written out.
 * @example
 * ```ts
 * import { createClient } from 'redis';
 * import { defineScript, fromNodeRedis, runScript } from 'sluice/redis';
 *
 * const client = fromNodeRedis(await createClient({ url: 'redis://127.0.0.1:6379' }).connect());
 * const ping = await defineScript("return redis.call('PING')");
 * await runScript(client, ping, [], []);
 * ```
 */
export function fromNodeRedis(client: NodeRedisLike): ScriptClient {
  if (isNodeRedisCluster(client)) return fromNodeRedisCluster(client);
  const options = (keys: readonly string[], args: readonly (string | number)[]): NodeRedisEvalOptions => ({
    keys: keys as string[],
    arguments: args.map(String),
  });
  return {
    evalsha: (sha, keys, args) => client.evalSha(sha, options(keys, args)),
    eval: (source, keys, args) => client.eval(source, options(keys, args)),
  };
}

/**
 * A cluster client routes a call by the slot of a key it names. node-redis computes that slot
 * with cluster-key-slot 1.1, which differs from Redis for a key whose first `{` is followed at
 * once by `}` (Redis then hashes the whole key); MOVED sends it back to the same wrong node
 * until the call fails. For such keys Sluice names a stand-in `{tag}` of the right slot.
 */
function fromNodeRedisCluster(client: NodeRedisClusterLike): ScriptClient {
  return sendingArgv((keys, argv) => {
    const first = keys[0];
    return client.sendCommand(first === undefined ? undefined : routingKey(first), false, argv);
  });
}

/** A ScriptClient over a `sendCommand` that takes the whole EVAL/EVALSHA argv (strings only). */
function sendingArgv(send: (keys: readonly string[], argv: string[]) => Promise<unknown>): ScriptClient {
  const argv = (command: string, script: string, keys: readonly string[], args: readonly (string | number)[]) => [
    command,
    script,
    String(keys.length),
    ...keys,
    ...args.map(String),
  ];
  return {
    evalsha: (sha, keys, args) => send(keys, argv('EVALSHA', sha, keys, args)),
    eval: (source, keys, args) => send(keys, argv('EVAL', source, keys, args)),
  };
}

function routingKey(key: string): string {
  const open = key.indexOf('{');
  return open !== -1 && key.charCodeAt(open + 1) === 0x7d ? `{${hashTagForSlot(keySlot(key))}}` : key;
}

/** Whether `client` looks like a node-redis client (camel-cased `evalSha`, plus `sendCommand`). */
export function isNodeRedis(client: object): client is NodeRedisLike {
  const candidate = client as { evalSha?: unknown; eval?: unknown; sendCommand?: unknown };
  return (
    typeof candidate.evalSha === 'function' &&
    typeof candidate.eval === 'function' &&
    typeof candidate.sendCommand === 'function'
  );
}

/** Whether a node-redis client is a cluster client (`createCluster()`), which routes by slot. */
export function isNodeRedisCluster(client: object): client is NodeRedisClusterLike {
  return typeof (client as { getSlotRandomNode?: unknown }).getSlotRandomNode === 'function';
}

/** The slot map and master connections of a node-redis `createCluster()` client, or undefined for another client. */
export function nodeRedisClusterNodes(client: object): ClusterNodes | undefined {
  if (!isNodeRedisCluster(client)) return undefined;
  const address = ({ host, port }: NodeRedisMaster) => `${host}:${port}`;
  return {
    masterOf(slot) {
      const master = client.slots[slot]?.master;
      return master && address(master);
    },
    connectionTo(master) {
      const node = client.masters.find((candidate) => address(candidate) === master);
      if (node === undefined) return undefined;
      return sendingArgv(async (_keys, argv) => (await client.nodeClient(node)).sendCommand(argv));
    },
  };
}

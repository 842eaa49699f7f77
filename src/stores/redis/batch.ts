import { type Call, type NodeBatching, type ReplyReader, sendCall } from './cluster-send.js';
import { keySlot } from './keyslot.js';
import type { LuaScript, ScriptClient } from './script.js';
import { type Commit, costArg } from './scripts/compose.js';

export type { ClusterNodes, NodeBatching, ReplyReader } from './cluster-send.js';

/** Options of decision batching (`createRedisLimiter({ batch })`). */
export interface BatchOptions {
  /**
   * Most decisions in one script call. Redis runs a script alone, so this bounds how long one
   * call holds the server (a few µs per decision; docs/deployment.md). Smaller calls also keep
   * Redis and Node busy at once: Node reads one call's replies while Redis runs the next.
   * Integer in 1..1000 (a call's keys are read with one `MGET`); default 64. Anything else
   * throws `ConfigError` when the limiter is created.
   */
  maxDecisions?: number;
  /**
   * Group decisions by Cluster hash slot, so every call's keys share one slot (no CROSSSLOT).
   * Default: on when the client is a Cluster client (ioredis/iovalkey `Cluster`, node-redis
   * `createCluster`). Turn it on for a {@link ScriptClient} in front of a cluster, or for a
   * managed service that enforces same-slot scripts through a proxy.
   */
  bySlot?: boolean;
  /**
   * Group decisions by Cluster master instead: one call per master per turn carries keys of
   * all the slots it serves, so over many keys a turn costs about one call per master instead
   * of one per slot. Default off. Needs an ioredis/iovalkey `Cluster` or node-redis
   * `createCluster` client (its slot map and its connection to each master) and Redis ≥ 7.0
   * or Valkey (the script declares `allow-cross-slot-keys`). Each call first checks, writing
   * nothing, that every key is served by the master it reached: one EXISTS per key, run
   * before any decision. When one is not (a stale slot map, a slot migrating), the call is
   * sent again, per slot, through the Cluster client, which follows MOVED and ASK. Implies
   * `bySlot`.
   */
  byNode?: boolean;
}

/** Collects the decisions of one event-loop turn into script calls. */
export interface Batcher<T> {
  /**
   * Queues one decision under the algorithm's `params` (its `scriptParams`); resolves with what
   * the reader made of it, rejects with the call's error.
   */
  decide(key: string, now: string, cost: number, commit: Commit, params: readonly number[]): Promise<T>;
  /** Sends what is queued now and resolves when every call sent so far has settled. */
  drain(): Promise<void>;
}

/**
 * Exact decision batching. Decisions queued in the same event-loop turn (flushed by
 * `setImmediate`, so every reply and request the poll phase delivered joins) go out as one
 * call of the algorithm's script with many KEYS; the script decides them one after another,
 * in arrival order, atomically, exactly as separate calls would. A call holds one clock
 * reading and one set of parameters: a decision whose reading or parameters (per-call
 * `params`) differ closes the call and opens the next (sent in order on the same connection),
 * so a client clock never decides a request at a time other than its own and a mixed batch is
 * decided in arrival order, each decision under its own numbers.
 */
export function createBatcher<T>(
  client: ScriptClient,
  script: LuaScript,
  options: { read: ReplyReader<T>; maxDecisions: number; bySlot: boolean; byNode?: NodeBatching },
): Batcher<T> {
  const { maxDecisions, bySlot, byNode } = options;
  const sender = { client, script, read: options.read, byNode };
  const open = new Map<number | string, Call>();
  const inFlight = new Set<Promise<void>>();
  let scheduled = false;

  const send = (call: Call): void => {
    const sent = sendCall(sender, call);
    inFlight.add(sent);
    void sent.finally(() => inFlight.delete(sent));
  };

  const flush = (): void => {
    scheduled = false;
    for (const call of open.values()) send(call);
    open.clear();
  };

  return {
    decide(key, now, cost, commit, params) {
      return new Promise<T>((resolve, reject) => {
        const slot = bySlot || byNode ? keySlot(key) : 0;
        const master = byNode?.nodes.masterOf(slot);
        const group = master ?? slot;
        let call = open.get(group);
        if (call !== undefined && (call.now !== now || call.params !== params || call.keys.length >= maxDecisions)) {
          send(call);
          call = undefined;
        }
        if (call === undefined) {
          call = { now, params, master, keys: [], costs: [], waiters: [] };
          open.set(group, call);
        }
        call.keys.push(key);
        call.costs.push(costArg(cost, commit));
        call.waiters.push({ resolve: resolve as (decision: unknown) => void, reject });
        if (!scheduled) {
          scheduled = true;
          setImmediate(flush);
        }
      });
    },
    async drain() {
      if (open.size > 0) flush();
      await Promise.all(inFlight);
    },
  };
}

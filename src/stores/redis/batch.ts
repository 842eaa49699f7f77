import { keySlot } from './keyslot.js';
import { type LuaScript, runScript, type ScriptClient } from './script.js';
import { type Commit, costArg, sharedCostArgs } from './scripts/compose.js';

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

/**
 * A Cluster client's slot map and its connection to each master. Calls on such a connection
 * get MOVED and ASK back as errors instead of following them, so a call never runs on a node
 * after ASKING, where keys still on the migrating node would look absent, hence fresh.
 */
export interface ClusterNodes {
  /** The master serving `slot` in the client's current map (`host:port`), when it has one. */
  masterOf(slot: number): string | undefined;
  /** The client's own connection to `master`, when it holds one. */
  connectionTo(master: string): ScriptClient | undefined;
}

/**
 * Reads decision `index` of a script reply (4 values per decision, in call order: 4 integers,
 * or `'error', message, 0, 0` for a decision whose command failed); throws for that error or
 * when the reply cannot be read. Reading in place spares a copy of each decision's 4 values.
 */
export type ReplyReader<T> = (reply: readonly unknown[], index: number) => T;

/** Collects the decisions of one event-loop turn into script calls. */
export interface Batcher<T> {
  /** Queues one decision; resolves with what the reader made of it, rejects with the call's error. */
  decide(key: string, now: string, cost: number, commit: Commit): Promise<T>;
  /** Sends what is queued now and resolves when every call sent so far has settled. */
  drain(): Promise<void>;
}

interface Waiter {
  resolve(decision: unknown): void;
  reject(error: unknown): void;
}

/**
 * One script call being filled: decisions sharing a slot (or all, unclustered), or sharing a
 * master (`master` set), and a clock reading.
 */
interface Call {
  now: string;
  master?: string;
  keys: string[];
  /** One `costArg` per decision. */
  costs: number[];
  waiters: Waiter[];
}

/** Per-master batching: the client's nodes and the per-node variant of the script. */
export interface NodeBatching {
  nodes: ClusterNodes;
  script: LuaScript;
}

/**
 * Exact decision batching. Decisions queued in the same event-loop turn (flushed by
 * `setImmediate`, so every reply and request the poll phase delivered joins) go out as one
 * call of the algorithm's script with many KEYS; the script decides them one after another,
 * in arrival order, atomically, exactly as separate calls would. A call holds one clock
 * reading: a decision whose reading differs closes the call and opens the next (sent in
 * order on the same connection), so a client clock never decides a request at a time other
 * than its own.
 */
export function createBatcher<T>(
  client: ScriptClient,
  script: LuaScript,
  params: readonly number[],
  options: { read: ReplyReader<T>; maxDecisions: number; bySlot: boolean; byNode?: NodeBatching },
): Batcher<T> {
  const { read, maxDecisions, bySlot, byNode } = options;
  const fanOut = (waiters: readonly Waiter[], reply: unknown): void => {
    if (!Array.isArray(reply) || reply.length !== 4 * waiters.length) {
      const error = new Error(
        `script reply of ${Array.isArray(reply) ? reply.length : typeof reply} for ${waiters.length} decisions`,
      );
      for (const waiter of waiters) waiter.reject(error);
      return;
    }
    for (let i = 0; i < waiters.length; i++) {
      const waiter = waiters[i] as Waiter;
      try {
        waiter.resolve(read(reply, i));
      } catch (error) {
        waiter.reject(error);
      }
    }
  };
  const open = new Map<number | string, Call>();
  const inFlight = new Set<Promise<void>>();
  let scheduled = false;

  const track = (sent: Promise<void>): void => {
    inFlight.add(sent);
    void sent.finally(() => inFlight.delete(sent));
  };

  const sendSlot = (call: Call): Promise<void> =>
    runScript(client, script, call.keys, [call.now, ...params, ...sharedCostArgs(call.costs)]).then(
      (reply) => fanOut(call.waiters, reply),
      (error: unknown) => {
        if (refusedMidMigration(error) && call.keys.length > 1) return sendEach(call);
        for (const waiter of call.waiters) waiter.reject(error);
      },
    );

  // The call's slot is half migrated and its keys are on both nodes (TRYAGAIN); nothing ran.
  // One key is always on one node (the client follows ASK to it), so decide them one by one.
  const sendEach = async (call: Call): Promise<void> => {
    await Promise.all(
      call.keys.map((key, i) =>
        runScript(client, script, [key], [call.now, ...params, call.costs[i] as number]).then(
          (reply) => fanOut([call.waiters[i] as Waiter], reply),
          (error: unknown) => call.waiters[i]?.reject(error),
        ),
      ),
    );
  };

  // A per-master call that did not run (or ran only its side-effect-free pre-pass) goes again
  // as one call per slot, in the same order, through the Cluster client.
  const sendBySlot = async (call: Call): Promise<void> => {
    const slots = new Map<number, Call>();
    call.keys.forEach((key, i) => {
      const slot = keySlot(key);
      let part = slots.get(slot);
      if (part === undefined) {
        part = { now: call.now, keys: [], costs: [], waiters: [] };
        slots.set(slot, part);
      }
      part.keys.push(key);
      part.costs.push(call.costs[i] as number);
      part.waiters.push(call.waiters[i] as Waiter);
    });
    await Promise.all([...slots.values()].map(sendSlot));
  };

  const sendNode = (call: Call, master: string, perNode: NodeBatching): Promise<void> => {
    const connection = perNode.nodes.connectionTo(master);
    if (connection === undefined) return sendBySlot(call);
    const args: (string | number)[] = [call.now, ...params];
    call.keys.forEach((key, i) => {
      args.push(key, call.costs[i] as number);
    });
    args.push(call.keys.length);
    return runScript(connection, perNode.script, call.keys.slice(0, 1), args).then(
      (reply) => (isNotLocal(reply) ? sendBySlot(call) : fanOut(call.waiters, reply)),
      (error: unknown) => {
        if (refusedBeforeRunning(error)) return sendBySlot(call);
        for (const waiter of call.waiters) waiter.reject(error);
      },
    );
  };

  const send = (call: Call): void => {
    track(call.master !== undefined && byNode ? sendNode(call, call.master, byNode) : sendSlot(call));
  };

  const flush = (): void => {
    scheduled = false;
    for (const call of open.values()) send(call);
    open.clear();
  };

  return {
    decide(key, now, cost, commit) {
      return new Promise<T>((resolve, reject) => {
        const slot = bySlot || byNode ? keySlot(key) : 0;
        const master = byNode?.nodes.masterOf(slot);
        const group = master ?? slot;
        let call = open.get(group);
        if (call !== undefined && (call.now !== now || call.keys.length >= maxDecisions)) {
          send(call);
          call = undefined;
        }
        if (call === undefined) {
          call = { now, master, keys: [], costs: [], waiters: [] };
          open.set(group, call);
        }
        call.keys.push(key);
        call.costs.push(costArg(cost, commit));
        call.waiters.push({ resolve, reject });
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

/** The per-node script's reply when a key is not served by the node it ran on (nothing written). */
function isNotLocal(reply: unknown): boolean {
  return Array.isArray(reply) && reply.length === 2 && reply[0] === 'not-local';
}

/**
 * Whether a node refused a per-master call before running it: its declared first key is not
 * served there (MOVED, or ASK for a key already migrated), the cluster is down there, or it is
 * over `maxmemory` (a script with flags is refused whole then; the per-slot script, without
 * flags, can still answer denials, which write nothing).
 */
function refusedBeforeRunning(error: unknown): boolean {
  return error instanceof Error && /^(?:MOVED|ASK|CLUSTERDOWN|OOM) /.test(error.message);
}

/**
 * Whether a call was refused without running: TRYAGAIN as Redis sends it (node-redis passes it
 * through), or ioredis giving up after its own retries, whose last refusal (TRYAGAIN, then
 * perhaps MOVED once the slot moved) it only names in the message.
 */
function refusedMidMigration(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  return /^(?:TRYAGAIN|Too many Cluster redirections\. Last error: ReplyError: (?:TRYAGAIN|MOVED|ASK) )/.test(
    error.message,
  );
}

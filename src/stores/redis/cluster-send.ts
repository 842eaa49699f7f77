import { keySlot } from './keyslot.js';
import { type LuaScript, runScript, type ScriptClient } from './script.js';
import { sharedCostArgs } from './scripts/compose.js';

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
 * Per-master batching: the client's nodes and the per-node variant of the script. Each
 * connection of `nodes` is given all of a call's keys and declares only the first to the server
 * (see `perMasterClients`).
 */
export interface NodeBatching {
  nodes: ClusterNodes;
  script: LuaScript;
}

/**
 * Reads decision `index` of a script reply (4 values per decision, in call order: 4 integers,
 * or `'error', message, 0, 0` for a decision whose command failed); throws for that error or
 * when the reply cannot be read. Reading in place spares a copy of each decision's 4 values.
 */
export type ReplyReader<T> = (reply: readonly unknown[], index: number) => T;

export interface Waiter {
  resolve(decision: unknown): void;
  reject(error: unknown): void;
}

/**
 * One script call: decisions sharing a slot (or all, unclustered), or sharing a master
 * (`master` set), a clock reading and the algorithm's parameters.
 */
export interface Call {
  now: string;
  /** The algorithm's `scriptParams` every decision of the call is taken under. */
  params: readonly number[];
  master?: string;
  keys: string[];
  /** One `costArg` per decision. */
  costs: number[];
  waiters: Waiter[];
}

/** Where a batcher's calls go: the client, the algorithm's script, the reply reader. */
export interface Sender {
  client: ScriptClient;
  script: LuaScript;
  read: ReplyReader<unknown>;
  /** Set for per-master batching. */
  byNode: NodeBatching | undefined;
}

/**
 * Sends one call and settles its waiters: per master on that master's own connection when the
 * call has one, else through the client (per slot on a Cluster). A call that a node refused
 * without running goes again, per slot or per key, so every decision runs exactly once.
 */
export function sendCall(sender: Sender, call: Call): Promise<void> {
  return call.master !== undefined && sender.byNode
    ? sendNode(sender, call, call.master, sender.byNode)
    : sendSlot(sender, call);
}

function sendSlot(sender: Sender, call: Call): Promise<void> {
  const { client, script } = sender;
  return runScript(client, script, call.keys, [call.now, ...call.params, ...sharedCostArgs(call.costs)]).then(
    (reply) => fanOut(sender, call.waiters, reply),
    (error: unknown) => {
      if (refusedMidMigration(error) && call.keys.length > 1) return sendEach(sender, call);
      for (const waiter of call.waiters) waiter.reject(error);
    },
  );
}

// The call's slot is half migrated and its keys are on both nodes (TRYAGAIN); nothing ran.
// One key is always on one node (the client follows ASK to it), so decide them one by one.
async function sendEach(sender: Sender, call: Call): Promise<void> {
  const { client, script } = sender;
  await Promise.all(
    call.keys.map((key, i) =>
      runScript(client, script, [key], [call.now, ...call.params, call.costs[i] as number]).then(
        (reply) => fanOut(sender, [call.waiters[i] as Waiter], reply),
        (error: unknown) => call.waiters[i]?.reject(error),
      ),
    ),
  );
}

// A per-master call that did not run (or ran only its side-effect-free pre-pass) goes again
// as one call per slot, in the same order, through the Cluster client.
async function sendBySlot(sender: Sender, call: Call): Promise<void> {
  const slots = new Map<number, Call>();
  call.keys.forEach((key, i) => {
    const slot = keySlot(key);
    let part = slots.get(slot);
    if (part === undefined) {
      part = { now: call.now, params: call.params, keys: [], costs: [], waiters: [] };
      slots.set(slot, part);
    }
    part.keys.push(key);
    part.costs.push(call.costs[i] as number);
    part.waiters.push(call.waiters[i] as Waiter);
  });
  await Promise.all([...slots.values()].map((part) => sendSlot(sender, part)));
}

function sendNode(sender: Sender, call: Call, master: string, perNode: NodeBatching): Promise<void> {
  const connection = perNode.nodes.connectionTo(master);
  if (connection === undefined) return sendBySlot(sender, call);
  const args: (string | number)[] = [call.now, ...call.params];
  call.keys.forEach((key, i) => {
    args.push(key, call.costs[i] as number);
  });
  args.push(call.keys.length);
  return runScript(connection, perNode.script, call.keys, args).then(
    (reply) => (isNotLocal(reply) ? sendBySlot(sender, call) : fanOut(sender, call.waiters, reply)),
    (error: unknown) => {
      if (refusedBeforeRunning(error)) return sendBySlot(sender, call);
      for (const waiter of call.waiters) waiter.reject(error);
    },
  );
}

/** Settles each waiter with its decision of the reply, or all with an error when the reply is not one per waiter. */
function fanOut(sender: Sender, waiters: readonly Waiter[], reply: unknown): void {
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
      waiter.resolve(sender.read(reply, i));
    } catch (error) {
      waiter.reject(error);
    }
  }
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

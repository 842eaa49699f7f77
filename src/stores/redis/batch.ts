import { keySlot } from './keyslot.js';
import { type LuaScript, runScript, type ScriptClient } from './script.js';

/** Options of decision batching (`createRedisLimiter({ batch })`). */
export interface BatchOptions {
  /**
   * Most decisions in one script call. Redis runs a script alone, so this bounds how long one
   * call holds the server (a few µs per decision; docs/deployment.md). Integer ≥ 1; default 256.
   */
  maxDecisions?: number;
  /**
   * Group decisions by Cluster hash slot, so every call's keys share one slot (no CROSSSLOT).
   * Default: on when the client is a Cluster client (ioredis/iovalkey `Cluster`, node-redis
   * `createCluster`). Turn it on for a {@link ScriptClient} in front of a cluster, or for a
   * managed service that enforces same-slot scripts through a proxy.
   */
  bySlot?: boolean;
}

/** The reply for one decision: `{allowed, remaining, retryAfterMs (−1: never), resetAfterMs}`. */
export type DecisionReply = readonly unknown[];

/** Collects the decisions of one event-loop turn into script calls. */
export interface Batcher {
  /** Queues one decision; resolves with its 4 reply integers, rejects with the call's error. */
  decide(key: string, now: string, cost: number, commit: boolean): Promise<DecisionReply>;
  /** Sends what is queued now and resolves when every call sent so far has settled. */
  drain(): Promise<void>;
}

interface Waiter {
  resolve(reply: DecisionReply): void;
  reject(error: unknown): void;
}

/** One script call being filled: decisions sharing a slot (or all, unclustered) and a clock reading. */
interface Call {
  now: string;
  keys: string[];
  pairs: (string | number)[];
  waiters: Waiter[];
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
export function createBatcher(
  client: ScriptClient,
  script: LuaScript,
  params: readonly number[],
  options: { maxDecisions: number; bySlot: boolean },
): Batcher {
  const { maxDecisions, bySlot } = options;
  const open = new Map<number, Call>();
  const inFlight = new Set<Promise<void>>();
  let scheduled = false;

  const send = (call: Call): void => {
    const sent = runScript(client, script, call.keys, [call.now, ...params, ...call.pairs]).then(
      (reply) => fanOut(call.waiters, reply),
      (error: unknown) => {
        if (refusedMidMigration(error) && call.keys.length > 1) return sendEach(call);
        for (const waiter of call.waiters) waiter.reject(error);
      },
    );
    inFlight.add(sent);
    void sent.finally(() => inFlight.delete(sent));
  };

  // The call's slot is half migrated and its keys are on both nodes (TRYAGAIN); nothing ran.
  // One key is always on one node (the client follows ASK to it), so decide them one by one.
  const sendEach = async (call: Call): Promise<void> => {
    await Promise.all(
      call.keys.map((key, i) =>
        runScript(client, script, [key], [call.now, ...params, ...call.pairs.slice(2 * i, 2 * i + 2)]).then(
          (reply) => fanOut([call.waiters[i] as Waiter], reply),
          (error: unknown) => call.waiters[i]?.reject(error),
        ),
      ),
    );
  };

  const flush = (): void => {
    scheduled = false;
    for (const call of open.values()) send(call);
    open.clear();
  };

  return {
    decide(key, now, cost, commit) {
      return new Promise<DecisionReply>((resolve, reject) => {
        const group = bySlot ? keySlot(key) : 0;
        let call = open.get(group);
        if (call !== undefined && (call.now !== now || call.keys.length >= maxDecisions)) {
          send(call);
          call = undefined;
        }
        if (call === undefined) {
          call = { now, keys: [], pairs: [], waiters: [] };
          open.set(group, call);
        }
        call.keys.push(key);
        call.pairs.push(cost, commit ? 1 : 0);
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

function fanOut(waiters: readonly Waiter[], reply: unknown): void {
  if (!Array.isArray(reply) || reply.length !== 4 * waiters.length) {
    const error = new Error(
      `script reply of ${Array.isArray(reply) ? reply.length : typeof reply} for ${waiters.length} decisions`,
    );
    for (const waiter of waiters) waiter.reject(error);
    return;
  }
  for (let i = 0; i < waiters.length; i++) (waiters[i] as Waiter).resolve(reply.slice(4 * i, 4 * i + 4));
}

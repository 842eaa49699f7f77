import { blockMsOf, partialBlockRead } from '../../admin.js';
import { algorithmFor } from '../../algorithms/params.js';
import type { Algorithm } from '../../algorithms/types.js';
import { type Decision, neverAdmitted, type ParamsOptions, peekDecision } from '../../decision.js';
import { ConfigError, StoreUnavailableError } from '../../errors.js';
import { type InvalidationChange, type Limiter, readClock } from '../../limiter.js';
import {
  checkKey,
  costOf,
  type OptionNames,
  optionalBoolean,
  orDefault,
  partialOf,
  requireAlgorithm,
  requireFunction,
  requireInteger,
  requireOptions,
} from '../../validate.js';
import { createWarner, type WarningSink } from '../../warnings.js';
import { type Batcher, type BatchOptions, createBatcher, type ReplyReader } from './batch.js';
import { clusterNodesOf, isClusterClient, toScriptClient } from './client.js';
import { warnIfEvicting } from './eviction.js';
import { followChannel } from './invalidation.js';
import { checkPrefix, redisKeyName } from './key-name.js';
import { lastCallArgs } from './last-call.js';
import { perMasterClients } from './node-clients.js';
import {
  type AdminOperation,
  type ClientWrapper,
  type LuaScript,
  runScript,
  runScriptThen,
  type ScriptClient,
  type StoreOperation,
} from './script.js';
import { adminScriptsOf } from './scripts/admin.js';
import { blockScript, unblockScript } from './scripts/block.js';
import { BLOCK_SUFFIX } from './scripts/block-key.js';
import { type AlgorithmScript, type Commit, costArg, MAX_PARTIAL_COST, perNodeScript } from './scripts/compose.js';
import { scripts } from './scripts/index.js';
import { chargeScripts, refundScripts } from './scripts/refund.js';
import { resetScript } from './scripts/reset.js';

/** Options of {@link createRedisLimiter}. */
export interface RedisLimiterOptions {
  /** An ioredis/iovalkey `Redis` or `Cluster` client, or a {@link ScriptClient}. Not closed by Sluice. */
  client: unknown;
  /** The algorithm core, e.g. `gcra({ limit: 100, periodMs: 60_000 })`. */
  algorithm: Algorithm;
  /**
   * Prefix of every Redis key; a key is stored as `prefix + '{' + key + '}'`, with `%` in the key
   * written `%25` and `}` written `%7D`, so a key and its companions (`…:block`) always share one
   * Cluster hash slot, whatever the key holds. No `{` or `}` (`ConfigError`). Default
   * `'sluice:<algorithm name>:'`.
   */
  prefix?: string;
  /**
   * Whose clock decides. `'server'` (default): Redis `TIME`, one clock for the whole fleet.
   * `'client'`: this process's `Date.now()`, for services that forbid `TIME` in scripts; or a
   * function returning epoch milliseconds (tests). Stored time never moves backwards either way.
   */
  clock?: 'server' | 'client' | (() => number);
  /**
   * Exact decision batching: decisions for any keys that arrive in the same event-loop turn
   * go out as one script call (per Cluster hash slot on a Cluster client, or per master with
   * `byNode`), which decides them in arrival order, atomically; the admissions are those of
   * one call per decision, in fewer round trips. `true` for the defaults, or {@link BatchOptions}. Default off: one call per
   * decision, sent at once.
   */
  batch?: boolean | BatchOptions;
  /**
   * Wraps the client each operation's script calls go through (once per operation, at
   * construction), e.g. `storeMetrics({ meter })` from `sluice/otel` to time every round trip.
   * Cluster detection and `batch.byNode` still read `client`; each master's connection of
   * `byNode` is wrapped once too, as `'batch'`.
   */
  wrapClient?: ClientWrapper;
  /**
   * A connection of its own (e.g. `client.duplicate()`: an ioredis/iovalkey `Redis` or `Cluster`,
   * or a connected node-redis client, `await client.duplicate().connect()`) that the limiter subscribes to `prefix + 'invalidations'`, where every instance's `reset`,
   * `block`, `unblock`, `reward` and `invalidate` are published. With it the limiter has
   * `invalidations`, and leased instances over it forget a key within one round trip of a change
   * made anywhere (docs/leasing.md). Not closed by Sluice. Without it the operations still publish.
   */
  subscriber?: unknown;
  /**
   * Where warnings go. On first use the limiter reads the server's `maxmemory-policy` (one
   * `INFO memory` per ioredis/iovalkey/node-redis client, in the background) and warns once
   * (`SLUICE_REDIS_EVICTION`) when the server can evict its keys. Default `process.emitWarning`; `false` turns warnings off
   * and skips the read.
   */
  onWarning?: WarningSink;
}

const BATCH_OPTION_NAMES: OptionNames<BatchOptions> = { maxDecisions: true, bySlot: true, byNode: true };
const REDIS_LIMITER_OPTION_NAMES: OptionNames<RedisLimiterOptions> = {
  client: true,
  algorithm: true,
  prefix: true,
  clock: true,
  batch: true,
  wrapClient: true,
  subscriber: true,
  onWarning: true,
};

/**
 * A limiter whose state lives in Redis: one atomic Lua script and one round trip per decision,
 * exact across every process that shares the Redis and the prefix. Every write sets a TTL
 * (the time until the key is fresh again); a denial writes nothing, beyond dropping a key found
 * without a TTL (one Sluice did not write).
 *
 * @throws {ConfigError} on invalid options, naming the option (options not an object, a client
 * or `algorithm` that is not one, `prefix` not a string or holding `{` or `}`, an unknown `clock`, invalid `batch`),
 * or an algorithm without a Redis script.
 * @example
 * ```ts
 * import { Redis } from 'ioredis';
 * import { gcra } from 'sluice';
 * import { createRedisLimiter } from 'sluice/redis';
 *
 * const limiter = createRedisLimiter({
 *   client: new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'),
 *   algorithm: gcra({ limit: 100, periodMs: 60_000 }),
 *   prefix: 'api:',
 *   batch: true, // one script call per event-loop turn instead of one per decision
 * });
 * const decision = await limiter.limit('user:42');
 * ```
 */
export function createRedisLimiter(options: RedisLimiterOptions): Limiter {
  requireOptions('createRedisLimiter options', options, REDIS_LIMITER_OPTION_NAMES);
  const wrap = requireFunction('wrapClient', options.wrapClient, true);
  const clients = clientsOf(toScriptClient(options.client), wrap);
  const algorithm = requireAlgorithm('algorithm', options.algorithm);
  const script = Object.hasOwn(scripts, algorithm.name) ? scripts[algorithm.name] : undefined;
  if (!script) throw new ConfigError(`no Redis script for algorithm '${algorithm.name}'`);
  const prefix = checkPrefix(orDefault(options.prefix, `sluice:${algorithm.name}:`));
  const clock = options.clock === 'client' ? Date.now : options.clock === 'server' ? undefined : options.clock;
  if (clock !== undefined && typeof clock !== 'function') {
    throw new ConfigError("clock must be 'server', 'client' or a function returning epoch ms");
  }
  // A call's algorithm: the limiter's, or the one its params make (checked before any I/O).
  const coreOf = (options: ParamsOptions | undefined): Algorithm =>
    options?.params === undefined ? algorithm : algorithmFor(algorithm, options.params);
  // The script reports the limiter's limit; a call under other params reports its own.
  const ownLimit = (core: Algorithm) => (decision: Decision) => {
    decision.limit = core.limit;
    return decision;
  };
  const read = (reply: unknown, index: number): Decision => toDecision(reply, algorithm.limit, index);
  // Made once: an unbatched decision under the limiter's own algorithm needs no closure per call.
  const readFirst = (reply: unknown): Decision => toDecision(reply, algorithm.limit, 0);
  const batcher = batcherOf(clients.batch, script, read, options, wrap);
  const refundScript = refundScripts[algorithm.name];
  const chargeScript = chargeScripts[algorithm.name];
  const channel = `${prefix}invalidations`;
  const heard = options.subscriber === undefined ? undefined : followChannel(options.subscriber, channel);
  const origin = heard ?? {
    messageFor: (key: string, change: InvalidationChange) => `\n${change}\n${key}`,
    emit: () => {},
  };

  const warn = createWarner(options.onWarning);
  let evictionChecked = options.onWarning === false;
  const firstUse = () => {
    if (evictionChecked) return;
    evictionChecked = true;
    warnIfEvicting(options.client, warn);
  };

  const nowArg = () => (clock ? String(readClock(clock)) : '');
  // Validates the caller's key, then gives the stored key: one hash tag per key, Cluster-safe.
  const redisKeyOf = (key: string): string => {
    checkKey(key);
    return redisKeyName(prefix, key);
  };
  const lastCall = lastCallArgs(redisKeyOf, algorithm, clock === undefined);
  // One rejection handler per action, made once: a call's failure becomes StoreUnavailableError.
  const failure = (action: string) => (error: unknown) => {
    throw new StoreUnavailableError(`Redis could not ${action} for '${algorithm.name}'`, error);
  };
  const failedTo = {
    decide: failure('decide'),
    peek: failure('peek'),
    refund: failure('refund'),
    charge: failure('charge'),
  };
  // An admin operation: after the decisions queued before it, one script call that changes the
  // key and publishes the invalidation, then this instance's listeners hear it at once.
  const operate = async (
    operation: AdminOperation,
    key: string,
    script: LuaScript,
    keys: string[],
    args: (string | number)[],
  ) => {
    await batcher?.drain();
    const told = operation !== 'penalty';
    const sent = told ? [...args, channel, origin.messageFor(key, operation)] : args;
    await runScript(clients[operation], script, keys, sent).catch(failure(operation));
    if (told) origin.emit(key, operation);
  };
  const admin = adminScriptsOf[algorithm.name];
  const decide = (keys: readonly string[], core: Algorithm, cost: number, commit: Commit): Promise<Decision> => {
    if (batcher) {
      const decided = batcher.decide(keys[0] as string, nowArg(), cost, commit, core.scriptParams);
      return core === algorithm ? decided.catch(failedTo.decide) : decided.then(ownLimit(core), failedTo.decide);
    }
    const args = lastCall.argsOf(core, nowArg(), cost, commit);
    const readReply = core === algorithm ? readFirst : (reply: unknown) => toDecision(reply, core.limit, 0);
    return runScriptThen(clients.decide, script, keys, args, readReply, failedTo.decide);
  };

  return {
    algorithm,
    // Not async: the hot path of every decision chains onto the script call's own promise
    // (no async frame, no per-call closure); bad input still rejects, never throws.
    limit(key, limitOptions) {
      try {
        const keys = lastCall.keysOf(key);
        const core = coreOf(limitOptions);
        const commit = partialOf(limitOptions) ? 'partial' : true;
        // A partial request admits at most the limit, so asking for more is asking for the limit.
        const cost =
          commit === true ? costOf(limitOptions) : Math.min(costOf(limitOptions), core.limit, MAX_PARTIAL_COST);
        firstUse();
        const decided = decide(keys, core, cost, commit);
        // The script replies a block alike to every request: only this call knows it was partial.
        return commit === true ? decided : decided.then(partialBlockRead);
      } catch (error) {
        return Promise.reject(error);
      }
    },
    async peek(key, peekOptions) {
      const redisKey = redisKeyOf(key);
      const core = coreOf(peekOptions);
      const now = nowArg();
      firstUse();
      // One round trip: the script decides cost 0 and an unapplied cost 1 on the same key.
      // Batched, both join the queue, so the peek sees the decisions queued before it.
      if (batcher) {
        const [current, next] = await Promise.all([
          batcher.decide(redisKey, now, 0, false, core.scriptParams),
          batcher.decide(redisKey, now, 1, false, core.scriptParams),
        ]).catch(failedTo.peek);
        return ownLimit(core)(peekDecision(current, next));
      }
      const reply = await runScript(
        clients.peek,
        script,
        [redisKey, redisKey],
        [now, ...core.scriptParams, costArg(0, false), costArg(1, false)],
      ).catch(failedTo.peek);
      return ownLimit(core)(peekDecision(read(reply, 0), read(reply, 1)));
    },
    async reset(key) {
      const redisKey = redisKeyOf(key);
      await operate('reset', key, resetScript, [redisKey], []);
    },
    async block(key, durationMs) {
      const redisKey = redisKeyOf(key);
      const ms = blockMsOf(durationMs);
      if (ms > 0) await operate('block', key, blockScript, [redisKey], [nowArg(), ms]);
    },
    unblock: async (key) => operate('unblock', key, unblockScript, [redisKeyOf(key) + BLOCK_SUFFIX], []),
    invalidate: async (key) => {
      checkKey(key);
      await operate('invalidate', key, unblockScript, [], []);
    },
    async reward(key, units) {
      const redisKey = redisKeyOf(key);
      if (costOf({ cost: units }) > 0)
        await operate('reward', key, admin.reward, [redisKey], [nowArg(), ...algorithm.scriptParams, units]);
    },
    async penalty(key, units) {
      const redisKey = redisKeyOf(key);
      if (costOf({ cost: units }) > 0)
        await operate('penalty', key, admin.penalty, [redisKey], [nowArg(), ...algorithm.scriptParams, units, '', '']);
    },
    ...(heard && { invalidations: heard }),
    ...(refundScript && {
      async refund(key: string, units: number, refundOptions?: ParamsOptions) {
        const redisKey = redisKeyOf(key);
        const params = coreOf(refundOptions).scriptParams;
        if (costOf({ cost: units }) === 0) return;
        await batcher?.drain();
        await runScript(clients.refund, refundScript, [redisKey], [nowArg(), ...params, units]).catch(failedTo.refund);
      },
    }),
    ...(chargeScript && {
      async charge(key: string, units: number, chargeOptions?: ParamsOptions) {
        const redisKey = redisKeyOf(key);
        const params = coreOf(chargeOptions).scriptParams;
        if (costOf({ cost: units }) === 0) return;
        // Decisions queued before the charge are applied before it, as they would be unbatched.
        await batcher?.drain();
        await runScript(clients.charge, chargeScript, [redisKey], [nowArg(), ...params, units]).catch(failedTo.charge);
      },
    }),
    algorithmFor: (params) => algorithmFor(algorithm, params),
    close: async () => {
      heard?.close();
      await batcher?.drain();
    },
  };
}

function batcherOf(
  client: ScriptClient,
  script: AlgorithmScript,
  read: ReplyReader<Decision>,
  options: RedisLimiterOptions,
  wrap: ClientWrapper | undefined,
): Batcher<Decision> | undefined {
  const { batch } = options;
  if (batch === undefined || batch === false) return undefined;
  const settings: BatchOptions =
    batch === true ? {} : requireOptions('batch (a boolean or BatchOptions)', batch, BATCH_OPTION_NAMES);
  const bySlot = optionalBoolean('batch.bySlot', settings.bySlot, isClusterClient(options.client));
  const byNode = optionalBoolean('batch.byNode', settings.byNode, false);
  const nodes = byNode ? clusterNodesOf(options.client) : undefined;
  if (byNode && nodes === undefined) {
    throw new ConfigError('batch.byNode needs an ioredis/iovalkey Cluster or node-redis createCluster client');
  }
  if (byNode && settings.bySlot === false)
    throw new ConfigError('batch.byNode falls back per slot: bySlot cannot be false');
  return createBatcher(client, script, {
    read,
    maxDecisions: requireInteger('batch.maxDecisions', orDefault(settings.maxDecisions, 64), 1, 1000),
    bySlot,
    byNode: nodes && { nodes: perMasterClients(nodes, wrap), script: perNodeScript(script) },
  });
}

/** The client each operation uses: `client` itself, or its wrapping for that operation. */
function clientsOf(client: ScriptClient, wrap: ClientWrapper | undefined) {
  const of = (operation: StoreOperation) => (wrap ? wrap(client, operation) : client);
  return {
    decide: of('decide'),
    peek: of('peek'),
    batch: of('batch'),
    refund: of('refund'),
    charge: of('charge'),
    reset: of('reset'),
    block: of('block'),
    unblock: of('unblock'),
    reward: of('reward'),
    penalty: of('penalty'),
    invalidate: of('invalidate'),
  };
}

/** The `allowed` of a decision denied by a block. */
const BLOCKED = -2;

/**
 * Reads decision `index` (`{allowed (0, 1, or −2: denied by a block), remaining, retryAfterMs (−1: never), resetAfterMs}`) from a
 * script reply; throws StoreUnavailableError for a decision the script answered
 * `{'error', message, 0, 0}` (one of its commands failed; the call's other decisions stand).
 * A partial decision's first integer is −1 (denied, nothing admitted) or 2 + the units admitted.
 */
function toDecision(reply: unknown, limit: number, index: number): Decision {
  const at = 4 * index;
  const fields = Array.isArray(reply) ? reply : [];
  const allowed = fields[at];
  const remaining = fields[at + 1];
  const retryAfterMs = fields[at + 2];
  const resetAfterMs = fields[at + 3];
  if (allowed === 'error') throw new StoreUnavailableError(`Redis failed this decision: ${String(remaining)}`);
  if (
    !Number.isInteger(allowed) ||
    !Number.isInteger(remaining) ||
    !Number.isInteger(retryAfterMs) ||
    !Number.isInteger(resetAfterMs)
  ) {
    throw new StoreUnavailableError(`unreadable script reply: ${JSON.stringify(reply)}`);
  }
  const held = Math.max(0, remaining as number); // below 0 only for a state written under a larger limit
  const decision: Decision =
    retryAfterMs === -1
      ? neverAdmitted({ limit, remaining: held, resetAfterMs: resetAfterMs as number })
      : {
          allowed: allowed === 1,
          limit,
          remaining: held,
          retryAfterMs: retryAfterMs as number,
          resetAfterMs: resetAfterMs as number,
        };
  if (allowed === 0 || allowed === 1) return decision;
  if (allowed === BLOCKED) {
    decision.reason = 'blocked';
    return decision;
  }
  const admitted = Math.max(0, (allowed as number) - 2);
  return { ...decision, allowed: allowed !== -1, admitted };
}

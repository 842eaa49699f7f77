import { randomUUID } from 'node:crypto';
import { withDeadline } from '../../deadline.js';
import { ConfigError, StoreUnavailableError } from '../../errors.js';
import {
  type OptionNames,
  orDefault,
  requireDurationMs,
  requireFunction,
  requireInteger,
  requireOptions,
} from '../../validate.js';
import { toScriptClient } from './client.js';
import { checkPrefix, redisKeyName } from './key-name.js';
import { type ClientWrapper, runScript } from './script.js';
import { heartbeatScript } from './scripts/heartbeat.js';

/** Options of {@link createHeartbeat}. */
export interface HeartbeatOptions {
  /** An ioredis/iovalkey client or a `ScriptClient`, usually the limiter's. Not closed by Sluice. */
  client: unknown;
  /** Wraps the client the beats go through (operation `'heartbeat'`), e.g. `storeMetrics` from `sluice/otel`. */
  wrapClient?: ClientWrapper;
  /** The fleet: instances heartbeating under the same name count each other. Default `'default'`. */
  name?: string;
  /**
   * Prefix of the registry key, stored as `prefix + '{' + name + '}'` (`%` in the name written
   * `%25`, `}` written `%7D`). No `{` or `}` (`ConfigError`). Default `'sluice:instances:'`.
   */
  prefix?: string;
  /** This instance's id in the registry. Default a random UUID. */
  instanceId?: string;
  /** Milliseconds between beats (one round trip each; a timer). Integer in 100..2^31 − 1; default 5,000. */
  intervalMs?: number;
  /** Milliseconds after its last beat when an instance stops counting. Integer > intervalMs; default 3 × intervalMs. */
  ttlMs?: number;
  /** The count to use until the first beat succeeds (e.g. Redis unreachable at start). Default 1. */
  assumeInstances?: number;
  /** Whose clock scores beats: `'server'` (default, Redis TIME), `'client'` (`Date.now`), or a function of epoch ms. */
  clock?: 'server' | 'client' | (() => number);
}

/** A counter snapshot of a heartbeat. */
export interface HeartbeatStats {
  /** Beats answered by the store. */
  beats: number;
  /** Beats that failed; the last known count stays in use. */
  failures: number;
  /** Timer ticks skipped because the previous beat had not settled (a hung store gets no pile-up). */
  skipped: number;
  /** The count {@link Heartbeat.instances} returns now. */
  instances: number;
}

/** A live instance count kept in the shared store: an `InstanceCount` for the local fallback policy. */
export interface Heartbeat {
  readonly instanceId: string;
  /** Live instances (integer ≥ 1): those that beat within `ttlMs`; during an outage, the last known count. */
  instances(): number;
  /**
   * Beats now: one round trip that records this instance and returns the live count.
   * Joins the beat in flight if there is one.
   * @throws {StoreUnavailableError} when the store cannot answer.
   */
  beat(): Promise<number>;
  stats(): HeartbeatStats;
  /** Stops beating and removes this instance from the registry (best effort, bounded by `intervalMs`). Idempotent. */
  close(): Promise<void>;
}

const HEARTBEAT_OPTION_NAMES: OptionNames<HeartbeatOptions> = {
  client: true,
  wrapClient: true,
  name: true,
  prefix: true,
  instanceId: true,
  intervalMs: true,
  ttlMs: true,
  assumeInstances: true,
  clock: true,
};

/**
 * Every instance beats into one sorted set (instance id → time of its last beat) every
 * `intervalMs`; the instances that beat within `ttlMs` are the live count N, used by the
 * local fallback policy to enforce limit ÷ N. When the store is down, N stays at the last
 * count the store gave. The first beat starts at once; the timer is unref'd.
 *
 * Accuracy: N is at most `ttlMs` stale (a crashed instance counts until its beat expires;
 * a closed one leaves at once). Instances started during an outage never learn N and use
 * `assumeInstances`.
 *
 * @throws {ConfigError} on invalid options.
 * @example
 * ```ts
 * import { Redis } from 'ioredis';
 * import { gcra } from 'sluice';
 * import { withFailurePolicy } from 'sluice/policy';
 * import { createHeartbeat, createRedisLimiter } from 'sluice/redis';
 *
 * const client = new Redis();
 * const heartbeat = createHeartbeat({ client, name: 'api', intervalMs: 5_000 });
 * const store = createRedisLimiter({ client, algorithm: gcra({ limit: 1_000, periodMs: 60_000 }) });
 * // While Redis is down each instance enforces 1,000 ÷ (instances live at the last beat).
 * const limiter = withFailurePolicy(store, { failure: 'fallback', fallback: { instances: heartbeat } });
 * ```
 */
export function createHeartbeat(options: HeartbeatOptions): Heartbeat {
  requireOptions('createHeartbeat options', options, HEARTBEAT_OPTION_NAMES);
  const raw = toScriptClient(options.client);
  const wrap = requireFunction('wrapClient', options.wrapClient, true);
  const client = wrap ? wrap(raw, 'heartbeat') : raw;
  const intervalMs = requireDurationMs('intervalMs', orDefault(options.intervalMs, 5000), 100);
  const ttlMs = requireInteger('ttlMs', orDefault(options.ttlMs, 3 * intervalMs), intervalMs + 1);
  const assumed = requireInteger('assumeInstances', orDefault(options.assumeInstances, 1));
  const name = orDefault(options.name, 'default');
  const prefix = checkPrefix(orDefault(options.prefix, 'sluice:instances:'));
  const instanceId = orDefault(options.instanceId, randomUUID());
  for (const [field, value] of [
    ['name', name],
    ['instanceId', instanceId],
  ] as const) {
    if (typeof value !== 'string' || value.length === 0) throw new ConfigError(`${field} must be a non-empty string`);
  }
  const clock = options.clock === 'client' ? Date.now : options.clock === 'server' ? undefined : options.clock;
  if (clock !== undefined && typeof clock !== 'function') {
    throw new ConfigError("clock must be 'server', 'client' or a function returning epoch ms");
  }
  const key = redisKeyName(prefix, name);
  const stats: HeartbeatStats = { beats: 0, failures: 0, skipped: 0, instances: assumed };
  let inFlight: Promise<number> | undefined;
  let closed = false;

  const send = async (beat: boolean): Promise<number> => {
    const now = clock ? String(Math.floor(clock())) : '';
    let reply: unknown;
    try {
      reply = await runScript(client, heartbeatScript, [key], [now, instanceId, ttlMs, beat ? 1 : 0]);
    } catch (error) {
      throw new StoreUnavailableError('heartbeat failed', error);
    }
    if (!Number.isSafeInteger(reply) || (reply as number) < 0) {
      throw new StoreUnavailableError(`unreadable heartbeat reply: ${JSON.stringify(reply)}`);
    }
    return reply as number;
  };

  const beat = (): Promise<number> => {
    inFlight ??= send(true).then(
      (live) => {
        inFlight = undefined;
        stats.beats++;
        // A live count of 0 cannot follow our own beat unless the store lost it; keep ≥ 1.
        stats.instances = Math.max(1, live);
        return stats.instances;
      },
      (error: unknown) => {
        inFlight = undefined;
        stats.failures++;
        throw error;
      },
    );
    return inFlight;
  };

  const tick = () => {
    if (closed) return;
    if (inFlight !== undefined) {
      stats.skipped++;
      return;
    }
    beat().catch(() => {});
  };
  const timer = setInterval(tick, intervalMs);
  timer.unref();
  tick();

  return {
    instanceId,
    instances: () => stats.instances,
    beat,
    stats: () => ({ ...stats }),
    async close() {
      if (closed) return;
      closed = true;
      clearInterval(timer);
      // Bounded: a hung store must not hang shutdown; the instance then expires after ttlMs.
      await withDeadline(send(false), intervalMs, () => {}).catch(() => {});
    },
  };
}

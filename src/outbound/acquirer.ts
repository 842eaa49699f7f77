import type { Decision } from '../decision.js';
import { ConfigError } from '../errors.js';
import { emissionIntervalMs } from '../lease/remote-model.js';
import { type Clock, type Limiter, monotonicClock } from '../limiter.js';
import {
  checkKey,
  costOf,
  MAX_TIMER_MS,
  type OptionNames,
  orDefault,
  requireInteger,
  requireOptions,
} from '../validate.js';
import { AcquirerClosedError, AcquireTimeoutError, CostOverLimitError, QueueFullError } from './errors.js';
import {
  armDeadline,
  createKeyQueue,
  type KeyQueue,
  pauseQueue,
  pump,
  type QueueContext,
  repriceQueue,
  settle,
  timerDelayMs,
  type Waiter,
  withdraw,
} from './key-queue.js';
import type { PauseStore } from './pauses.js';

/** Options of {@link createAcquirer}. */
export interface AcquirerOptions {
  /** Most waiters queued per key in this process; one more rejects with {@link QueueFullError}. Default 1,000. */
  maxQueueLength?: number;
  /**
   * Most waiters of all keys together in this process (queued plus, paced, booked); one more
   * rejects with {@link QueueFullError}, so a flood of keys cannot grow memory without bound.
   * Integer ≥ 1. Default 10,000.
   */
  maxWaiters?: number;
  /**
   * Longest pause (ms) any one response or `pause` call can cause, whatever the upstream wrote
   * (`Retry-After` in seconds or as a date, an epoch or delta reset, a `RateLimit` reset): longer
   * ones are cut to it, here, in the pause store and in the limiter's `block`. A pause read from
   * the pause store is cut to it too. Also how long a learned rate holds without a response
   * repeating it (see {@link Acquirer.scale}). Integer in 1..2^31 − 2. Default 600,000 (10 minutes).
   */
  maxPauseMs?: number;
  /**
   * "No bursts": every admitted unit is released at its own slot of the GCRA schedule, one
   * emission interval after the previous one across the whole fleet, instead of at once. The
   * limiter's `burst` then only says how far ahead (burst × emission interval) a process may book
   * slots; a wake-up waits until half of that is free and books it with one call of that cost for
   * its leading waiters, so the fleet makes one store call per batch. Needs a GCRA limiter that is
   * not leased (a lease's units all report one place in the schedule). Default false.
   */
  pace?: boolean;
  /**
   * Paced: how late (ms) after its slot a unit may still be released. Slots are then timed from
   * the store call's start (not its reply, so a slow reply does not spend the bound). A unit that
   * would go later (the process stalled) gives its slot up and books again, so a stalled process
   * never sends on top of the following slots: every release then lies within `maxLatenessMs` of
   * its slot, and calls n slots apart are at least n × T − maxLatenessMs apart (less the store's
   * own delay in deciding). Set it to the jitter your margin under the upstream absorbs. Default:
   * no bound.
   */
  maxLatenessMs?: number;
  /**
   * Largest extra wait (ms) drawn at random after a denial before asking again, so processes
   * waiting on one key do not all call at the same refill. Default: one emission interval, or
   * a quarter of the booking horizon when paced.
   */
  jitterMs?: number;
  /**
   * Units charged per unit asked until an upstream announces its rate: the rate this acquirer
   * calls at is the limiter's ÷ `unitCost`. Above 1 it leaves room to follow a higher announced
   * rate (see `followHigherRates`). Integer ≥ 1, at most the limiter's limit. Default 1.
   */
  unitCost?: number;
  /**
   * Follow an upstream that announces a rate higher than this acquirer's (the limiter's rate ÷
   * `unitCost`): {@link Acquirer.scale} may then lower the units per call down to 1, so the
   * limiter's own rate is the ceiling. Default false: an announced rate is honoured only when lower.
   */
  followHigherRates?: boolean;
  /**
   * Where pauses learned from an upstream are shared with the rest of the fleet
   * (`createRedisPauseStore` on the limiter's Redis). Read once per wake-up of a key's queue.
   * Without it a pause holds this acquirer only, unless the limiter itself can `block` a key.
   */
  pauses?: PauseStore;
  /** Milliseconds clock for timers and deadlines; default monotonic. */
  clock?: Clock;
}

/** Default {@link AcquirerOptions.maxPauseMs}: an upstream's wait beyond 10 minutes is more likely a bug or an attack than a plan. */
const DEFAULT_MAX_PAUSE_MS = 600_000;

/** Options of one {@link Acquirer.acquire} call. */
export interface AcquireOptions {
  /** Units to acquire: a non-negative safe integer. Default 1. */
  cost?: number;
  /** Gives up when aborted: the call rejects with `signal.reason` (an `AbortError` DOMException by default). */
  signal?: AbortSignal;
  /**
   * Longest wait (ms) accepted; a longer one rejects with {@link AcquireTimeoutError}, as soon as
   * it is known. Any number ≥ 0, `Infinity` included (a deadline past setTimeout's 2^31 − 1 ms is
   * reached in steps).
   */
  maxWaitMs?: number;
}

/** A leased limiter (`createLeasedLimiter`): it answers from units leased ahead, not from the store's schedule. */
function isLeased(limiter: Limiter): boolean {
  return 'leaseSize' in limiter && 'remote' in limiter;
}

/** A limiter that can be told to deny a key fleet-wide for a while (the `block` of the admin operations). */
interface Blocking {
  block(key: string, durationMs: number): Promise<void>;
  unblock(key: string): Promise<void>;
}

/**
 * Waits for quota instead of failing: per key, one first-in-first-out queue in this process
 * whose head asks the limiter, with one timer set from the store's `retryAfterMs`.
 */
export interface Acquirer {
  readonly limiter: Limiter;
  /**
   * Resolves with the admitting decision once `cost` units of `key` are granted (paced: at the
   * unit's slot). Rejects with {@link AcquireTimeoutError} when `maxWaitMs` would be exceeded,
   * {@link QueueFullError} (`maxQueueLength` or `maxWaiters` reached), {@link CostOverLimitError} when `cost` exceeds what the key can
   * hold, `signal.reason` when aborted, or the limiter's own errors. A rejection charges nothing
   * (one exception, paced only: see `docs/outbound.md`).
   *
   * @example
   * ```ts
   * import { createMemoryLimiter, gcra } from 'sluice';
   * import { createAcquirer } from 'sluice/outbound';
   *
   * const acquirer = createAcquirer(createMemoryLimiter({ algorithm: gcra({ limit: 10, periodMs: 1000 }) }));
   * await acquirer.acquire('partner-api', { maxWaitMs: 5000, signal: AbortSignal.timeout(10_000) });
   * ```
   */
  acquire(key: string, options?: AcquireOptions): Promise<Decision>;
  /** Waiters of `key` in this process: queued plus (paced) booked and waiting for their slot. */
  waiting(key: string): number;
  /**
   * Denies `key` for `durationMs`, cut to `maxPauseMs`: here at once (booked slots move past the
   * pause), and across the fleet through the pause store and the limiter's `block`, when there are.
   * @throws {ConfigError} unless `durationMs` is an integer ≥ 0; {@link InvalidKeyError} on a bad key.
   */
  pause(key: string, durationMs: number): void;
  /**
   * Lifts `key`'s pause: here at once, in the pause store (other processes see it at their next
   * look, within a second while they have waiters) and the limiter's block (`unblock`), when there
   * are. Waiters are then served as the limiter allows.
   *
   * Rejects with {@link InvalidKeyError}, or `StoreUnavailableError` when the pause store or the
   * limiter could not lift theirs (this process's pause is lifted anyway).
   * @example
   * ```ts
   * import { createMemoryLimiter, gcra } from 'sluice';
   * import { createAcquirer } from 'sluice/outbound';
   *
   * const acquirer = createAcquirer(createMemoryLimiter({ algorithm: gcra({ limit: 10, periodMs: 1000 }) }));
   * acquirer.pause('partner-api', 60_000);
   * await acquirer.resume('partner-api'); // the upstream is back: stop waiting
   * ```
   */
  resume(key: string): Promise<void>;
  /**
   * Milliseconds until `key`'s pause ends as this acquirer will honour it: the longer of its own
   * and the pause store's (cut to `maxPauseMs`); 0 when it is not paused. Rejects with
   * {@link InvalidKeyError}, or the pause store's error when it could not answer.
   * @example
   * ```ts
   * import { createMemoryLimiter, gcra } from 'sluice';
   * import { createAcquirer } from 'sluice/outbound';
   *
   * const acquirer = createAcquirer(createMemoryLimiter({ algorithm: gcra({ limit: 10, periodMs: 1000 }) }));
   * acquirer.pause('partner-api', 5000);
   * await acquirer.pauseOf('partner-api'); // about 5000
   * ```
   */
  pauseOf(key: string): Promise<number>;
  /**
   * Charges `factor` units per unit asked for `key` (an upstream announced its rate), until a
   * later call replaces it or `maxPauseMs` passes without one (then the acquirer's `unitCost`
   * again, until an upstream says otherwise). Integer ≥ 1, clamped to the limiter's limit and to
   * at least `unitCost` (or, with `followHigherRates`, at least 1: the limiter's rate stays the ceiling).
   */
  scale(key: string, factor: number): void;
  /** The longest pause (ms) this acquirer honours, and how long a learned rate holds: `maxPauseMs`. */
  readonly maxPauseMs: number;
  /** The rate (units per ms) the limiter allows one key, for comparing with an upstream's. */
  readonly ratePerMs: number;
  /** Rejects every waiter with {@link AcquirerClosedError}, stops pauses and timers. Idempotent. */
  close(): void;
}

const ACQUIRER_OPTION_NAMES: OptionNames<AcquirerOptions> = {
  maxQueueLength: true,
  maxWaiters: true,
  maxPauseMs: true,
  pace: true,
  maxLatenessMs: true,
  jitterMs: true,
  unitCost: true,
  followHigherRates: true,
  pauses: true,
  clock: true,
};

/**
 * Makes any {@link Limiter} (memory, Redis, leased, policy-wrapped) wait for quota.
 *
 * @throws {ConfigError} on invalid options, or `pace` on a limiter that is not GCRA or is leased.
 * @example
 * ```ts
 * import { createMemoryLimiter, gcra } from 'sluice';
 * import { createAcquirer } from 'sluice/outbound';
 *
 * const acquirer = createAcquirer(createMemoryLimiter({ algorithm: gcra({ limit: 10, periodMs: 1000 }) }));
 * // Waits up to 5 s for a unit of 'partner-api', or rejects with AcquireTimeoutError at once.
 * const decision = await acquirer.acquire('partner-api', { maxWaitMs: 5000 });
 * ```
 */
export function createAcquirer(limiter: Limiter, options: AcquirerOptions = {}): Acquirer {
  requireOptions('createAcquirer options', options, ACQUIRER_OPTION_NAMES);
  const maxQueueLength = requireInteger('maxQueueLength', options.maxQueueLength ?? 1000);
  const maxWaiters = requireInteger('maxWaiters', orDefault(options.maxWaiters, 10_000));
  // One below setTimeout's limit: a pause's idle timer fires a millisecond after it ends.
  const maxPauseMs = requireInteger(
    'maxPauseMs',
    orDefault(options.maxPauseMs, DEFAULT_MAX_PAUSE_MS),
    1,
    MAX_TIMER_MS - 1,
  );
  const { algorithm } = limiter;
  if (options.pace !== undefined && typeof options.pace !== 'boolean') throw new ConfigError('pace must be a boolean');
  if (options.pace && algorithm.name !== 'gcra') {
    throw new ConfigError(`pace needs a GCRA limiter (its schedule gives each unit a slot), got '${algorithm.name}'`);
  }
  if (options.pace && isLeased(limiter)) {
    throw new ConfigError(
      'pace needs every decision from the shared store, but a leased limiter decides from its local lease ' +
        '(each unit of a lease reports the same schedule): pace its remote instead, which books a batch per call',
    );
  }
  const intervalMs = emissionIntervalMs(algorithm);
  const paceIntervalMs = options.pace ? intervalMs : 0;
  const jitterMs = options.jitterMs ?? (options.pace ? algorithm.horizonMs / 4 : intervalMs);
  if (typeof jitterMs !== 'number' || !(jitterMs >= 0) || !Number.isFinite(jitterMs)) {
    throw new ConfigError(`jitterMs must be a finite number ≥ 0, got ${String(jitterMs)}`);
  }
  const maxLatenessMs = options.maxLatenessMs ?? Number.POSITIVE_INFINITY;
  if (typeof maxLatenessMs !== 'number' || !(maxLatenessMs >= 0)) {
    throw new ConfigError(`maxLatenessMs must be a number ≥ 0, got ${String(maxLatenessMs)}`);
  }
  const unitCost = requireInteger('unitCost', options.unitCost ?? 1);
  if (unitCost < 1 || unitCost > algorithm.limit) {
    throw new ConfigError(`unitCost must be between 1 and the limiter's limit ${algorithm.limit}, got ${unitCost}`);
  }
  const followHigherRates = options.followHigherRates ?? false;
  if (typeof followHigherRates !== 'boolean') throw new ConfigError('followHigherRates must be a boolean');
  const now = options.clock ?? monotonicClock;
  const queues = new Map<string, KeyQueue>();
  const factors = createFactorTable(now, maxPauseMs);
  const { pauses } = options;
  let closed = false;
  /** Waiters of every key, queued or booked: counted against `maxWaiters`. */
  let waiters = 0;

  const ctx: QueueContext = {
    limiter,
    now,
    paceIntervalMs,
    horizonMs: algorithm.horizonMs,
    refillUnits: Math.ceil(algorithm.limit / 2),
    maxLatenessMs,
    pausedForMs:
      pauses &&
      ((key) =>
        pauses.pausedForMs(key).then(
          (ms) => Math.min(ms, maxPauseMs),
          () => undefined,
        )),
    pauseReadIntervalMs: options.pace ? algorithm.horizonMs / 4 : 0,
    jitterMs: () => Math.random() * jitterMs,
    onIdle: (queue) => {
      if (queues.get(queue.key) === queue && queue.pausedUntilMs <= now()) queues.delete(queue.key);
    },
  };
  const queueOf = (key: string): KeyQueue => {
    let queue = queues.get(key);
    if (queue === undefined) {
      queue = createKeyQueue(key);
      queues.set(key, queue);
    }
    return queue;
  };

  return {
    limiter,
    maxPauseMs,
    ratePerMs: algorithm.limit / algorithm.horizonMs,
    acquire(key, acquireOptions = {}) {
      try {
        checkKey(key);
        const units = costOf(acquireOptions);
        if (units > algorithm.limit) {
          throw new CostOverLimitError(`cost ${units} exceeds the ${algorithm.limit} units '${key}' can ever hold`);
        }
        const maxWaitMs = acquireOptions.maxWaitMs ?? Number.POSITIVE_INFINITY;
        if (typeof maxWaitMs !== 'number' || !(maxWaitMs >= 0)) {
          throw new ConfigError(`maxWaitMs must be a number ≥ 0, got ${String(maxWaitMs)}`);
        }
        const { signal } = acquireOptions;
        signal?.throwIfAborted();
        if (closed) throw new AcquirerClosedError('the acquirer is closed');
        if (waiters >= maxWaiters) {
          throw new QueueFullError(`the acquirer already has ${maxWaiters} waiters (maxWaiters)`);
        }
        const queue = queueOf(key);
        if (queue.waiting.size >= maxQueueLength) {
          throw new QueueFullError(`'${key}' already has ${maxQueueLength} waiters (maxQueueLength)`);
        }
        return enqueue(queue, units, now() + maxWaitMs, signal);
      } catch (error) {
        return Promise.reject(error);
      }
    },
    waiting(key) {
      const queue = queues.get(key);
      return queue === undefined ? 0 : queue.waiting.size + queue.booked.size;
    },
    pause(key, durationMs) {
      checkKey(key);
      requireInteger('durationMs', durationMs, 0);
      if (closed || durationMs === 0) return;
      // One cap for every source: a year-9999 date or an epoch reset ends here as maxPauseMs.
      const pauseMs = Math.min(durationMs, maxPauseMs);
      const queue = queueOf(key);
      const untilMs = now() + pauseMs;
      if (untilMs > queue.pausedUntilMs) queue.pauseShared = false;
      pauseQueue(ctx, queue, untilMs);
      pauseFleet(queue, pauseMs, untilMs);
      // The wake-up is re-timed to the end of the pause; an empty queue is kept until then (one
      // unref'd timer), so that a waiter arriving meanwhile still waits for it.
      rewake(queue, pauseMs + 1);
    },
    async resume(key) {
      checkKey(key);
      const blocking = limiter as Limiter & Partial<Blocking>;
      // The shared pause goes first: a wake-up started by the local lift would read it back.
      const lifted = await Promise.allSettled([pauses?.resume?.(key), blocking.unblock?.(key)]);
      const queue = queues.get(key);
      if (queue !== undefined && !closed) {
        queue.pausedUntilMs = 0;
        queue.pauseShared = false;
        rewake(queue, 0);
      }
      for (const outcome of lifted) if (outcome.status === 'rejected') throw outcome.reason;
    },
    async pauseOf(key) {
      checkKey(key);
      const localMs = Math.max(0, (queues.get(key)?.pausedUntilMs ?? 0) - now());
      const storedMs = pauses === undefined ? 0 : Math.min(await pauses.pausedForMs(key), maxPauseMs);
      return Math.max(localMs, storedMs);
    },
    scale(key, factor) {
      checkKey(key);
      requireInteger('factor', factor);
      const current = factors.get(key) ?? unitCost;
      const next = Math.min(Math.max(factor, followHigherRates ? 1 : unitCost), algorithm.limit);
      // Set even when unchanged: a response repeating the rate renews it.
      factors.set(key, next);
      if (next === current) return;
      const queue = queues.get(key);
      if (queue !== undefined) repriceQueue(ctx, queue, (units) => priced(key, units));
    },
    close() {
      if (closed) return;
      closed = true;
      for (const queue of queues.values()) {
        clearTimeout(queue.wake);
        queue.wake = undefined;
        for (const waiter of [...queue.waiting.toArray(), ...queue.booked]) {
          withdraw(ctx, queue, waiter, new AcquirerClosedError('the acquirer was closed while waiting'));
        }
      }
      queues.clear();
    },
  };

  /** What `units` cost on `key` after the scale learned for it, at most what the key can hold. */
  function priced(key: string, units: number): number {
    return Math.min(units * (factors.get(key) ?? unitCost), Math.max(units, algorithm.limit));
  }

  /**
   * Re-times `queue`'s wake-up: with waiters, a wake-up now (it sleeps on through a pause); an
   * empty queue keeps one unref'd timer until `idleMs`, then lets itself go.
   */
  function rewake(queue: KeyQueue, idleMs: number): void {
    clearTimeout(queue.wake);
    queue.wake = undefined;
    if (queue.waiting.size > 0) {
      pump(ctx, queue);
      return;
    }
    if (idleMs === 0) {
      settle(ctx, queue);
      return;
    }
    queue.wake = setTimeout(() => {
      queue.wake = undefined;
      if (queue.waiting.size > 0) pump(ctx, queue);
      else settle(ctx, queue);
    }, timerDelayMs(idleMs)).unref();
  }

  function enqueue(queue: KeyQueue, units: number, deadlineMs: number, signal?: AbortSignal): Promise<Decision> {
    const cost = priced(queue.key, units);
    if (deadlineMs < queue.availableAtMs || deadlineMs < queue.pausedUntilMs) {
      return Promise.reject(timeoutError(queue.key, cost, Math.max(queue.availableAtMs, queue.pausedUntilMs)));
    }
    waiters++;
    return new Promise<Decision>((resolve, reject) => {
      const waiter: Waiter = {
        units,
        cost,
        deadlineMs,
        resolve: (decision) => {
          waiters--;
          resolve(decision);
        },
        reject: (error) => {
          waiters--;
          reject(error);
        },
        done: false,
        list: undefined,
        prev: undefined,
        next: undefined,
        timer: undefined,
        booking: undefined,
        detach: () => signal?.removeEventListener('abort', onAbort),
      };
      function onAbort() {
        withdraw(ctx, queue, waiter, signal?.reason);
      }
      signal?.addEventListener('abort', onAbort, { once: true });
      armDeadline(ctx, queue, waiter);
      queue.waiting.push(waiter);
      pump(ctx, queue);
    });
  }

  function timeoutError(key: string, cost: number, availableAtMs: number) {
    const retryAfterMs = Math.max(0, availableAtMs - now());
    return new AcquireTimeoutError(
      `acquire of ${cost} unit(s) on '${key}' would wait ${Math.ceil(retryAfterMs)} ms, past its maxWaitMs`,
      retryAfterMs,
    );
  }

  function pauseFleet(queue: KeyQueue, durationMs: number, untilMs: number): void {
    // Best effort: a store that cannot take the pause leaves the others to meet the upstream's
    // next 429, and this process keeps the pause whatever the store says later.
    pauses?.pause(queue.key, durationMs).then(
      () => {
        if (queue.pausedUntilMs === untilMs) queue.pauseShared = true;
      },
      () => {},
    );
    const blocking = limiter as Limiter & Partial<Blocking>;
    if (typeof blocking.block === 'function') blocking.block(queue.key, durationMs).catch(() => {});
  }
}

/**
 * The factor each key's calls are charged, learned from an upstream: each holds `ttlMs` unless
 * renewed, so one response announcing a very low rate cannot pin it for the acquirer's life.
 * Expired entries are swept when the table has doubled since the last sweep, so it stays
 * bounded by the keys learned within `ttlMs`.
 */
function createFactorTable(now: () => number, ttlMs: number) {
  const entries = new Map<string, { factor: number; untilMs: number }>();
  let sweepAt = 1024;
  return {
    get(key: string): number | undefined {
      const entry = entries.get(key);
      if (entry === undefined) return undefined;
      if (entry.untilMs > now()) return entry.factor;
      entries.delete(key);
      return undefined;
    },
    set(key: string, factor: number): void {
      entries.set(key, { factor, untilMs: now() + ttlMs });
      if (entries.size < sweepAt) return;
      const nowMs = now();
      for (const [each, entry] of entries) if (entry.untilMs <= nowMs) entries.delete(each);
      sweepAt = Math.max(1024, entries.size * 2);
    },
  };
}

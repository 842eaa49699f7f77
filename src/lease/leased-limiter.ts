import type { Decision, LimitOptions, ParamsOptions } from '../decision.js';
import type { Limiter } from '../limiter.js';
import { checkKey, costOf, partialOf } from '../validate.js';
import { adminOperations } from './admin.js';
import { followInvalidations } from './invalidation.js';
import { createKeyState, type KeyState, observe } from './key-state.js';
import type { KeyTable } from './key-table.js';
import { createLanes, type Lane, type Lanes } from './lanes.js';
import { enqueue } from './lease-queue.js';
import { decideLocally, expire, peekLocally } from './local-decision.js';
import { type LeasedLimiterOptions, readLeaseOptions } from './options.js';
import { createPassThrough, type PassThrough } from './pass-through.js';
import { chargeUnits, refundUnits } from './refund.js';
import type { LeaseContext } from './remote-lease.js';
import { createRoundTrip } from './round-trip.js';
import { createCounters, type LeaseStats } from './stats.js';

/** A {@link Limiter} that serves from quota leased in blocks from its remote. */
export interface LeasedLimiter extends Limiter {
  /** The limiter leases are taken from. */
  readonly remote: Limiter;
  readonly leaseSize: number;
  /**
   * The synchronous hot path: the decision when this instance can take it without the remote (a
   * lease hit, a cached refusal, a cost above the limit), or `undefined` when it needs the remote
   * or a lease for the key is in flight; then call `limit`. Never waits, never allocates a Promise.
   *
   * @throws {InvalidKeyError} / {@link InvalidCostError} for bad input, synchronously.
   */
  tryLimit(key: string, options?: LimitOptions): Decision | undefined;
  /** Counters since creation. */
  stats(): LeaseStats;
  /**
   * Returns now the unspent units of every key idle for `returnIdleMs`, as the timer does;
   * resolves to the units given back. Resolves 0 when idle return is off.
   */
  returnIdle(): Promise<number>;
}

/**
 * Leasing: wraps any limiter as its remote, takes quota from it in blocks of `leaseSize` units
 * and serves decisions from them locally, so one remote call buys up to `leaseSize` decisions.
 *
 * 1. Per key: units leased and unspent, when they expire, the last remote reply, a cached refusal.
 * 2. A request is served locally when enough unexpired units remain (expired ones dropped first).
 * 3. Otherwise the remote is asked for max(lease size, shortfall); if refused, once more for
 *    exactly the shortfall; if refused again, the refusal is cached until the remote's
 *    retry-after and later requests needing at least as much are denied without a remote call.
 * 4. One lease in flight per key: concurrent callers queue (FIFO) and are served from the block
 *    that arrives; when it runs short, one call asks for the whole queue's demand (not one round
 *    trip per caller); other keys never wait.
 * 9. Pass-through: when a lease's units would all expire before a round trip brings them
 *    (leaseSize × T, less the 1 ms a whole-ms reset can hide, ≤ the measured round trip), calls
 *    lease nothing: they go straight to the remote, or, while the key has a call in flight, queue
 *    behind it for one call that asks for exactly their demand.
 * 5. Leases expire lease size × T after they are asked for (T = emission interval), and each
 *    unit earlier, as soon as the remote has regenerated its slot.
 * 6. `leaseSize: 1` answers exactly as the remote alone would, with fewer calls only for
 *    refusals it has cached.
 * 7. `remaining` = unspent local units + the remote's remaining (as last heard, regenerated
 *    since), clamped to 0..limit; retry-after is the remote's; reset-after is the remote's
 *    without the slots of the units held here (GCRA, token bucket), as if they were returned.
 * 8. `stats()` counts requests, remote calls, local hits, cached denials, leases, returns, and
 *    balances: leased + refunded = spent + held + expired + returned + dropped units.
 *
 * Beyond the seed: {@link LeasedLimiter.tryLimit} decides synchronously; unspent units are
 * returned to the remote on idle (`returnIdleMs`), on `close()` and on eviction, when the
 * remote takes refunds; `adaptive` shrinks leases near exhaustion. The leased limiter has
 * `refund` exactly when its remote has: refunded units go back on the key's local lease first,
 * as far as it can still hold them, and the rest to the remote (docs/leasing.md); it has `charge`
 * exactly when its remote has: debt spends the key's local lease first, the rest on the remote.
 *
 * Per-call `params` (a plan's numbers): each set is leased apart, under its own numbers, in
 * leases of at most its limit, and `peek` and `refund` carry them; a key holds units under one set
 * at a time, in one table bounded by `maxKeys`. A key's units leased under other numbers are
 * given back at its first call under new ones (refunded when the remote takes refunds, else
 * dropped, counted in `droppedUnits`, and the key's next leases shrink by them until the remote
 * has them back: at most one lease lost per key, whatever the switching), so a plan change is
 * honoured on an instance at its next call for the key (docs/leasing.md).
 *
 * Accuracy (docs/leasing.md): for GCRA and token bucket, fleet-wide admissions over any interval
 * Δ stay within burst + ⌊Δ/T⌋ for any number of instances, because units are leased before they
 * are spent and never spent after their slot; the error is under-admission, at most
 * Σ max(0, leaseSize − requests served) over instances holding leases (worst case
 * instances × (leaseSize − 1)), which lease return recovers.
 *
 * A rejected remote call rejects the request that made it and every request queued behind it,
 * with the remote's error (wrap the leased limiter with `withFailurePolicy` to turn that into a
 * policy). A degraded reply from a remote that is itself policy-wrapped is passed through and
 * leases nothing.
 *
 * @throws {ConfigError} on invalid options (see {@link LeasedLimiterOptions}).
 * @example
 * ```ts
 * import { Redis } from 'ioredis';
 * import { createLeasedLimiter, gcra } from 'sluice';
 * import { createRedisLimiter } from 'sluice/redis';
 *
 * const client = new Redis();
 * const algorithm = gcra({ limit: 10_000, periodMs: 60_000 });
 * // With a subscriber, a reset or block on any instance reaches the units the others hold.
 * const remote = createRedisLimiter({ client, subscriber: client.duplicate(), algorithm });
 * // 10 instances: leases of 250 (limit ÷ (4 × instances)) keep the worst-case error under a quarter.
 * const limiter = createLeasedLimiter({ remote, leaseSize: 250, returnIdleMs: 5_000 });
 * const decision = limiter.tryLimit('tenant:acme') ?? (await limiter.limit('tenant:acme'));
 * ```
 */
export function createLeasedLimiter(options: LeasedLimiterOptions): LeasedLimiter {
  const settings = readLeaseOptions(options);
  const { remote, returnIdleMs, returnCheckIntervalMs, clock } = settings;
  const counters = createCounters();
  const nowMs = () => Math.floor(clock());
  const roundTrip = createRoundTrip();
  const lanes = createLanes(settings, counters, nowMs, roundTrip);
  const { table, returns } = lanes;
  const passThrough = createPassThrough(remote, counters, clock, roundTrip);

  const unfollow = followInvalidations(remote, table, counters, returns, settings.warn);
  let timer: ReturnType<typeof setInterval> | undefined;
  if (returnIdleMs > 0 && returnCheckIntervalMs > 0) {
    timer = setInterval(() => void returns.returnIdle(), returnCheckIntervalMs);
    timer.unref();
  }
  let closing: Promise<void> | undefined;

  const leased: LeasedLimiter = {
    algorithm: remote.algorithm,
    remote,
    leaseSize: settings.leaseSize,
    tryLimit(key, limitOptions) {
      checkKey(key);
      const cost = costOf(limitOptions);
      if (partialOf(limitOptions)) return undefined; // `limit` decides it
      const lane = laneOf(lanes, limitOptions);
      return lane && !lane.context.passesThrough() ? tryLocally(lanes, lane, key, cost) : undefined;
    },
    limit(key, limitOptions) {
      let cost: number;
      let lane: Lane | undefined;
      let state: KeyState | undefined | null;
      try {
        checkKey(key);
        cost = costOf(limitOptions);
        lane = laneOf(lanes, limitOptions);
        if (lane === undefined) return unleased(remote, counters, key, limitOptions);
        state = lanes.stateOf(lane, key);
        // The key's lease under other numbers is in flight: this call leases nothing.
        if (state === null) return unleased(remote, counters, key, limitOptions);
        if (lane.context.passesThrough()) return passKey(lane, state, table, passThrough, key, limitOptions, cost);
        if (partialOf(limitOptions)) return lane.partially(key, state, cost);
      } catch (error) {
        return Promise.reject(error);
      }
      return limitKey(lane.context, table, state, key, cost);
    },
    async peek(key, peekOptions) {
      checkKey(key);
      const lane = laneOf(lanes, peekOptions);
      const state = lane && lanes.stateOf(lane, key);
      if (lane === undefined || state === null || lane.context.passesThrough()) return remote.peek(key, peekOptions);
      return peekKey(lane.context, state, key);
    },
    async reset(key) {
      checkKey(key);
      const state = table.get(key);
      if (state !== undefined) {
        // Admissions before a reset no longer count: the held units are void, as on hearing one.
        counters.expiredUnits += state.units;
        state.units = 0;
        table.delete(key);
      }
      await remote.reset(key);
    },
    stats() {
      const atMs = nowMs();
      let heldUnits = 0;
      for (const [, state] of table.entries()) {
        expire(state, atMs, state.lane.model, counters);
        heldUnits += state.units;
      }
      return { ...counters, keys: table.size(), heldUnits, roundTripMs: roundTrip.estimateMs() };
    },
    returnIdle: () => returns.returnIdle(),
    close() {
      closing ??= (async () => {
        clearInterval(timer);
        unfollow();
        await returns.returnAll();
        await remote.close();
      })();
      return closing;
    },
  };
  // Forward what the remote can do: a refund goes to the local lease first (docs/leasing.md).
  if (typeof remote.refund === 'function') {
    leased.refund = async (key, units, refundOptions) => {
      checkKey(key);
      const lane = laneOf(lanes, refundOptions);
      const state = lane && lanes.stateOf(lane, key);
      if (lane === undefined || state === null || lane.context.passesThrough())
        return remote.refund?.(key, units, refundOptions);
      return refundUnits(lane.context, state, key, units);
    };
  }
  // Debt spends the local lease first, the rest goes to the remote (docs/leasing.md), under the
  // numbers of its params: it spends only units held under them, and moves no key to their lane.
  if (typeof remote.charge === 'function') {
    leased.charge = async (key, units, chargeOptions) => {
      checkKey(key);
      const lane = laneOf(lanes, chargeOptions);
      if (lane === undefined) return remote.charge?.(key, units, chargeOptions);
      const state = table.get(key);
      return chargeUnits(lane.context, state?.lane === lane.context ? state : undefined, key, units);
    };
  }
  const { algorithmFor: remoteAlgorithmFor } = remote;
  if (typeof remoteAlgorithmFor === 'function') {
    leased.algorithmFor = (params) => remoteAlgorithmFor.call(remote, params);
  }
  Object.assign(leased, adminOperations(remote, table, counters, returns));
  if (remote.invalidations)
    Object.defineProperty(leased, 'invalidations', { value: remote.invalidations, enumerable: true });
  return leased;
}

/** The lane of a call's params; `undefined`: decide unleased. */
function laneOf(lanes: Lanes, options: ParamsOptions | undefined): Lane | undefined {
  return options?.params === undefined ? lanes.base : lanes.of(options.params);
}

/** A call under params past the lanes' bound: the remote decides it, exactly, one call each. */
function unleased(
  remote: Limiter,
  counters: ReturnType<typeof createCounters>,
  key: string,
  options: LimitOptions | undefined,
): Promise<Decision> {
  counters.requests++;
  counters.remoteCalls++;
  return remote.limit(key, options);
}

/**
 * A call on a lane whose leases would expire before a round trip: straight to the remote, unless
 * the key has a call in flight; then it queues behind it, and one call asks for exactly the
 * queue's demand (no spare units), so a hot key's concurrent callers share round trips.
 */
function passKey(
  lane: Lane,
  known: KeyState | undefined,
  table: KeyTable,
  passThrough: PassThrough,
  key: string,
  options: LimitOptions | undefined,
  cost: number,
): Promise<Decision> {
  if (partialOf(options)) return passThrough(key, options);
  const { context } = lane;
  let state = known;
  if (state !== undefined && (state.queue !== undefined || state.passing > 0))
    return enqueue(context, key, state, cost);
  if (state === undefined) {
    state = createKeyState(context.nowMs(), context);
    table.add(key, state);
  }
  const passing = state;
  passing.passing++;
  // then, not finally: finally adds a promise and two microtask turns per call.
  return passThrough(key, options).then(
    (decision) => {
      passing.passing--;
      return decision;
    },
    (error: unknown) => {
      passing.passing--;
      throw error;
    },
  );
}

/** The decision for a key heard from and without a lease in flight, when no remote call is needed. */
function tryLocally(lanes: Lanes, lane: Lane, key: string, cost: number): Decision | undefined {
  const state = lanes.stateOf(lane, key);
  if (!state?.anchored || state.queue !== undefined) return undefined;
  const { context } = lane;
  const atMs = context.nowMs();
  const decision = decideLocally(context.model, state, cost, atMs, context.counters);
  if (decision === undefined) return undefined;
  context.counters.requests++;
  lanes.table.touch(key, state, atMs);
  return decision;
}

/** A checked request: locally when possible, else behind the key's lease. */
function limitKey(
  context: LeaseContext,
  table: KeyTable,
  known: KeyState | undefined,
  key: string,
  cost: number,
): Promise<Decision> {
  const atMs = context.nowMs();
  let state = known;
  if (state === undefined) {
    state = createKeyState(atMs, context);
    table.add(key, state);
  } else if (state.anchored && state.queue === undefined) {
    const decision = decideLocally(context.model, state, cost, atMs, context.counters);
    if (decision !== undefined) {
      context.counters.requests++;
      table.touch(key, state, atMs);
      return Promise.resolve(decision);
    }
  }
  table.touch(key, state, atMs);
  return enqueue(context, key, state, cost);
}

/** `peek`: from the held units or a cached refusal, else the remote's peek (under the lane's numbers) plus the held units. */
async function peekKey(context: LeaseContext, state: KeyState | undefined, key: string): Promise<Decision> {
  const { model, counters } = context;
  const atMs = context.nowMs();
  const settled: KeyState | undefined = state?.anchored === true && state.queue === undefined ? state : undefined;
  const local = settled && peekLocally(model, settled, atMs, counters);
  if (local) return local;
  counters.remoteCalls++;
  let reply: Decision;
  try {
    reply = await context.remote.peek(key, context.params && { params: context.params });
  } catch (error) {
    counters.remoteErrors++;
    throw error;
  }
  if (reply.degraded) return reply;
  if (settled) observe(settled, atMs, reply);
  const held = state?.units ?? 0;
  const remaining = Math.min(model.limit, held + reply.remaining);
  const resetAfterMs = Math.max(0, reply.resetAfterMs - model.heldSlotsMs(held));
  return held >= 1
    ? { ...reply, allowed: true, remaining, retryAfterMs: 0, resetAfterMs }
    : { ...reply, remaining, resetAfterMs };
}

import type { Decision, LimitOptions } from '../decision.js';
import type { Limiter } from '../limiter.js';
import { checkKey, costOf, partialOf } from '../validate.js';
import { createKeyState, dropExpired, type KeyState, observe, recordLease, type Waiter } from './key-state.js';
import { createKeyTable } from './key-table.js';
import { type LeasedLimiterOptions, readLeaseOptions } from './options.js';
import { createPartialAdmission } from './partial.js';
import { remoteModelOf } from './remote-model.js';
import { createReturns } from './returns.js';
import { nextLeaseSize } from './sizing.js';
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
 *    that arrives; other keys never wait.
 * 5. Leases expire lease size × T after they are asked for (T = emission interval), and each
 *    unit earlier, as soon as the remote has regenerated its slot.
 * 6. `leaseSize: 1` answers exactly as the remote alone would, with fewer calls only for
 *    refusals it has cached.
 * 7. `remaining` = unspent local units + the remote's remaining (as last heard, regenerated
 *    since), clamped to 0..limit; retry-after and reset-after are the remote's.
 * 8. `stats()` counts requests, remote calls, local hits, cached denials, leases, returns.
 *
 * Beyond the seed: {@link LeasedLimiter.tryLimit} decides synchronously; unspent units are
 * returned to the remote on idle (`returnIdleMs`), on `close()` and on eviction, when the
 * remote takes refunds; `adaptive` shrinks leases near exhaustion.
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
 */
export function createLeasedLimiter(options: LeasedLimiterOptions): LeasedLimiter {
  const { remote, leaseSize, adaptiveDivisor, returnIdleMs, returnCheckIntervalMs, maxKeys, clock } =
    readLeaseOptions(options);
  const model = remoteModelOf(remote.algorithm);
  // With lease return on, other instances may give units back while this one caches a refusal:
  // it asks again after at most returnIdleMs, so returned units reach it within that time.
  const refusalTrustMs = returnIdleMs > 0 ? returnIdleMs : Number.POSITIVE_INFINITY;
  const { limit, intervalMs } = model;
  const counters = createCounters();
  const nowMs = () => Math.floor(clock());

  const expire = (state: KeyState, atMs: number): void => {
    if (state.units !== 0) counters.expiredUnits += dropExpired(state, atMs, intervalMs);
  };
  const table = createKeyTable(
    maxKeys,
    (state) => state.units > 0,
    (key, state) => void returns.takeBack(key, state),
  );
  const returns = createReturns({
    refund: remote.refund?.bind(remote),
    table,
    counters,
    returnIdleMs,
    intervalMs,
    nowMs,
    expire,
  });

  const answer = (state: KeyState, atMs: number, allowed: boolean, retryAfterMs: number): Decision => ({
    allowed,
    limit,
    remaining: Math.min(limit, state.units + model.remainingAt(state, atMs)),
    retryAfterMs,
    resetAfterMs: Math.max(0, state.resetAtMs - atMs),
  });

  // Retry-after of a cached refusal covering `need` more units, or undefined when none does.
  const refusalFor = (state: KeyState, need: number, atMs: number): number | undefined => {
    if (state.deniedUnits === 0 || need < state.deniedUnits || atMs >= state.trustRefusalUntilMs) return undefined;
    return model.retryAfterMs(state, atMs, need, state.deniedUnits, state.deniedUntilMs);
  };

  // Rules 2 and 3 without I/O, for a key heard from and without a lease in flight.
  const decideHere = (state: KeyState, cost: number, atMs: number): Decision | undefined => {
    expire(state, atMs);
    if (cost === 0 && !model.exact) return undefined;
    if (cost <= state.units) {
      state.units -= cost;
      counters.localHits++;
      return answer(state, atMs, true, 0);
    }
    if (cost > limit && !model.exact) return undefined;
    const retryAfterMs = cost > limit ? Number.POSITIVE_INFINITY : refusalFor(state, cost - state.units, atMs);
    if (retryAfterMs === undefined) return undefined;
    counters.cachedDenials++;
    return answer(state, atMs, false, retryAfterMs);
  };

  const ask = (key: string, cost: number): Promise<Decision> => {
    counters.remoteCalls++;
    return remote.limit(key, { cost });
  };

  // Rule 3 for the request at the head of the key's queue. Undefined when the lease arrived but
  // the older units it was to top up expired meanwhile: the units are kept and the head asks again.
  const lease = async (key: string, state: KeyState, cost: number): Promise<Decision | undefined> => {
    let askedAtMs = nowMs();
    expire(state, askedAtMs);
    if (cost === 0 || cost > limit) {
      // Nothing to lease: the remote reports, this instance listens.
      const reply = await ask(key, cost);
      if (reply.degraded) return reply;
      observe(state, askedAtMs, reply);
      return answer(state, askedAtMs, reply.allowed, reply.retryAfterMs);
    }
    let shortfall = cost - state.units;
    const heard = state.anchored ? model.remainingAt(state, askedAtMs) : undefined;
    // Asking again before a refusal's retry-after only looks for units other instances returned:
    // the shortfall, not a lease the remote said it cannot grant.
    const probing = state.deniedUnits > 0 && askedAtMs < state.deniedUntilMs;
    let units = probing ? shortfall : Math.max(nextLeaseSize(leaseSize, adaptiveDivisor, heard), shortfall);
    let reply = await ask(key, units);
    if (!reply.allowed && !reply.degraded && units > shortfall) {
      // A lease of 30 against 10 left must not refuse a request for 1.
      askedAtMs = nowMs();
      expire(state, askedAtMs);
      shortfall = cost - state.units;
      units = shortfall;
      reply = await ask(key, units);
    }
    if (reply.degraded) return reply;
    observe(state, askedAtMs, reply);
    if (!reply.allowed) {
      counters.refusals++;
      state.deniedUnits = units;
      state.deniedUntilMs = askedAtMs + reply.retryAfterMs;
      state.trustRefusalUntilMs = askedAtMs + Math.min(reply.retryAfterMs, refusalTrustMs);
      return answer(state, askedAtMs, false, reply.retryAfterMs);
    }
    counters.leases++;
    counters.leasedUnits += units;
    expire(state, nowMs());
    if (state.units + units < cost) {
      state.units = 0;
      recordLease(state, askedAtMs, units, reply.resetAfterMs, intervalMs);
      return undefined;
    }
    recordLease(state, askedAtMs, units, reply.resetAfterMs, intervalMs);
    // The remote admitted these units at the time it was asked: the head spends them there.
    state.units -= cost;
    if (adaptiveDivisor > 0 && remote.refund !== undefined) {
      // What this instance heard before leasing may be stale; the reply is not. Keep no more
      // than a divisor-th of what the remote held before this lease, and give the rest back.
      const excess = state.units - Math.floor((reply.remaining + units) / adaptiveDivisor);
      if (excess > 0) {
        state.remaining += excess;
        void returns.trim(key, state, excess);
      }
    }
    return answer(state, askedAtMs, true, 0);
  };

  // A failed remote call fails the request that made it and every request queued behind it.
  const fail = (state: KeyState, error: unknown): void => {
    counters.remoteErrors++;
    const queue = state.queue ?? [];
    state.queue = undefined;
    for (const waiter of queue) waiter.reject(error);
  };

  // Serves the requests that queued behind a lease, in order, one lease in flight at a time.
  const serve = async (key: string, state: KeyState, queue: Waiter[]): Promise<void> => {
    while (queue.length > 0) {
      const head = queue[0] as Waiter;
      let decision: Decision | undefined;
      try {
        decision = state.anchored ? decideHere(state, head.cost, nowMs()) : undefined;
        decision ??= await lease(key, state, head.cost);
      } catch (error) {
        fail(state, error);
        return;
      }
      if (decision === undefined) continue;
      queue.shift();
      counters.requests++;
      head.resolve(decision);
    }
    state.queue = undefined;
  };

  // The request that found no lease in flight takes one; later requests for the key queue.
  const take = async (key: string, state: KeyState, cost: number): Promise<Decision> => {
    const queue: Waiter[] = [];
    state.queue = queue;
    let decision: Decision | undefined;
    try {
      do decision = await lease(key, state, cost);
      while (decision === undefined);
    } catch (error) {
      fail(state, error);
      throw error;
    }
    counters.requests++;
    if (queue.length === 0) state.queue = undefined;
    else void serve(key, state, queue);
    return decision;
  };

  const tryLimit = (key: string, limitOptions?: LimitOptions): Decision | undefined => {
    checkKey(key);
    const cost = costOf(limitOptions);
    if (partialOf(limitOptions)) return undefined; // `limit` decides it
    const state = table.get(key);
    if (state === undefined || !state.anchored || state.queue !== undefined) return undefined;
    const atMs = nowMs();
    const decision = decideHere(state, cost, atMs);
    if (decision === undefined) return undefined;
    counters.requests++;
    table.touch(key, state, atMs);
    return decision;
  };

  const partially = createPartialAdmission({ remote, limit, counters, nowMs, expire, answer });

  let timer: ReturnType<typeof setInterval> | undefined;
  if (returnIdleMs > 0 && returnCheckIntervalMs > 0) {
    timer = setInterval(() => void returns.returnIdle(), returnCheckIntervalMs);
    timer.unref();
  }
  let closing: Promise<void> | undefined;

  return {
    algorithm: remote.algorithm,
    remote,
    leaseSize,
    tryLimit,
    limit(key, limitOptions) {
      let cost: number;
      try {
        checkKey(key);
        cost = costOf(limitOptions);
        if (partialOf(limitOptions)) return partially(key, table.get(key), cost);
      } catch (error) {
        return Promise.reject(error);
      }
      const atMs = nowMs();
      let state = table.get(key);
      if (state === undefined) {
        state = createKeyState(atMs);
        table.add(key, state);
      } else if (state.anchored && state.queue === undefined) {
        const decision = decideHere(state, cost, atMs);
        if (decision !== undefined) {
          counters.requests++;
          table.touch(key, state, atMs);
          return Promise.resolve(decision);
        }
      }
      table.touch(key, state, atMs);
      const queue = state.queue;
      if (queue === undefined) return take(key, state, cost);
      counters.waited++;
      return new Promise<Decision>((resolve, reject) => {
        queue.push({ cost, resolve, reject });
      });
    },
    async peek(key) {
      checkKey(key);
      const atMs = nowMs();
      const state = table.get(key);
      const settled = state?.anchored === true && state.queue === undefined;
      if (settled) {
        expire(state, atMs);
        if (state.units >= 1) return answer(state, atMs, true, 0);
        const retryAfterMs = refusalFor(state, 1, atMs);
        if (retryAfterMs !== undefined) return answer(state, atMs, false, retryAfterMs);
      }
      counters.remoteCalls++;
      let reply: Decision;
      try {
        reply = await remote.peek(key);
      } catch (error) {
        counters.remoteErrors++;
        throw error;
      }
      if (reply.degraded) return reply;
      if (settled) observe(state, atMs, reply);
      const held = state?.units ?? 0;
      const remaining = Math.min(limit, held + reply.remaining);
      return held >= 1 ? { ...reply, allowed: true, remaining, retryAfterMs: 0 } : { ...reply, remaining };
    },
    async reset(key) {
      checkKey(key);
      table.delete(key);
      await remote.reset(key);
    },
    stats() {
      const atMs = nowMs();
      let heldUnits = 0;
      for (const [, state] of table.entries()) {
        expire(state, atMs);
        heldUnits += state.units;
      }
      return { ...counters, keys: table.size, heldUnits };
    },
    returnIdle: () => returns.returnIdle(),
    close() {
      closing ??= (async () => {
        clearInterval(timer);
        await returns.returnAll();
        await remote.close();
      })();
      return closing;
    },
  };
}

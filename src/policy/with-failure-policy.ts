import { blockMsOf } from '../admin.js';
import { algorithmFor } from '../algorithms/params.js';
import { TIMED_OUT, withDeadline } from '../deadline.js';
import type { Decision, FailureMode, LimitOptions } from '../decision.js';
import { forwardOptional } from '../decorate.js';
import { isSluiceError, StoreUnavailableError } from '../errors.js';
import type { Limiter } from '../limiter.js';
import { checkKey, costOf, partialOf, requireLimiter } from '../validate.js';
import { degrade, type PolicyContext, shadowed } from './degraded.js';
import { type FailurePolicyOptions, readPolicyOptions } from './options.js';
import { reasonOf } from './policies.js';
import { createPolicyCounters, type FailureStats } from './stats.js';

export type { DegradedEvent, FailurePolicyOptions, ShadowDenyEvent } from './options.js';
export type { FailureStats } from './stats.js';

/** A {@link Limiter} that answers by its failure policy when the store cannot decide. */
export interface PolicyLimiter extends Limiter {
  /** Like `Limiter.peek`, with an optional per-call failure policy. */
  peek(key: string, options?: Pick<LimitOptions, 'failure' | 'params'>): Promise<Decision>;
  /**
   * The wrapped limiter's synchronous path, when it has one (a leased limiter's `tryLimit`): a
   * decision taken without I/O, or `undefined` when the store is needed (then call `limit`).
   * Shadow mode applies. Absent when the wrapped limiter has no `tryLimit`.
   */
  tryLimit?(key: string, options?: LimitOptions): Decision | undefined;
  stats(): FailureStats;
}

/** A limiter that can decide some calls synchronously, without I/O (a leased limiter). */
interface SyncPath {
  tryLimit(key: string, options?: LimitOptions): Decision | undefined;
}

/** A policy over one wrapped limiter. */
interface Wrapped extends PolicyContext {
  readonly limiter: Limiter;
  /** The wrapped limiter, when it has a synchronous `tryLimit`. */
  readonly sync: (Limiter & SyncPath) | undefined;
  /** Counts a reply (or error) that arrived after its deadline. */
  readonly onLate: () => void;
}

/**
 * Wraps any limiter so that a failing store turns into a policy instead of an error:
 *
 * - **deadline**: a decision waits at most `deadlineMs` (default 50) for the store; a late
 *   reply is discarded and never decided on twice. The store may still apply a late script,
 *   so a unit may have been charged remotely for a request the policy answered.
 * - **policy**: `'open'` admits, `'closed'` denies (retryAfterMs = the breaker's remaining
 *   cool-down), `'fallback'` decides on a local limiter at limit ÷ N (N fixed or live from
 *   `createHeartbeat`), denying the keys whose block this process issued or met in a decision.
 *   Only store failures ({@link StoreUnavailableError}, timeouts) reach the policy; an ordinary
 *   denial is returned as is, and other errors (invalid key or cost) reject.
 * - **circuit breaker**: K consecutive failures open it; while open no call waits on the store;
 *   after the cool-down exactly one probe goes through, and its success closes the breaker.
 * - **loud**: degraded decisions carry `degraded: true`, `degradedReason` and `failure`;
 *   `onDegraded` and `stats()` count them.
 * - **shadow mode**: count would-be denials, deny nothing.
 *
 * Wrap a leased limiter (not the other way round) so that unexpired leases keep serving
 * during a blip before any policy applies: when the wrapped limiter has a synchronous
 * `tryLimit`, every call tries it first, so lease hits and cached refusals pay no deadline
 * timer and are served even while the breaker is open. `refund`, `charge`, `reset` and the admin
 * operations (`block`, `penalty`, …) go to the store under the same deadline and breaker, and
 * reject with {@link StoreUnavailableError} when it cannot answer (no policy can answer for them).
 * `close()` closes the wrapped limiter too.
 *
 * @throws {ConfigError} when `limiter` is not a Limiter, on invalid options (naming the option;
 * durations above 2^31 − 1 ms included), `failure: 'fallback'` without `fallback`, or an
 * algorithm the local fallback cannot divide. Calls reject with `ConfigError` for an unknown
 * per-call `failure`, and with the wrapped limiter's typed errors for invalid keys and costs.
 * @example
 * ```ts
 * import { Redis } from 'ioredis';
 * import { gcra } from 'sluice';
 * import { withFailurePolicy } from 'sluice/policy';
 * import { createRedisLimiter } from 'sluice/redis';
 *
 * const store = createRedisLimiter({ client: new Redis(), algorithm: gcra({ limit: 100, periodMs: 60_000 }) });
 * const limiter = withFailurePolicy(store, {
 *   failure: 'open',
 *   deadlineMs: 30,
 *   onDegraded: (event) => console.warn(`rate limiter degraded (${event.reason}): ${event.failure}`),
 * });
 * const login = await limiter.limit('login:alice', { failure: 'closed' }); // logins fail closed
 * ```
 */
export function withFailurePolicy(limiter: Limiter, options: FailurePolicyOptions = {}): PolicyLimiter {
  requireLimiter('limiter', limiter);
  const settings = readPolicyOptions(limiter.algorithm, options);
  const counts = createPolicyCounters();
  const candidate = limiter as Limiter & Partial<SyncPath>;
  const wrapped: Wrapped = {
    settings,
    counts,
    limit: limiter.algorithm.limit,
    limiter,
    sync: typeof candidate.tryLimit === 'function' ? (candidate as Limiter & SyncPath) : undefined,
    onLate: () => {
      counts.lateReplies++;
    },
  };
  const { breaker, fallback } = settings;
  // An unblock or reset made on another instance ends a block the fallback learned of.
  const unfollow =
    fallback &&
    limiter.invalidations?.subscribe((key, change) => {
      if (key !== undefined && (change === 'unblock' || change === 'reset')) fallback.blocks.forget(key);
    });

  const policyLimiter: PolicyLimiter = {
    algorithm: limiter.algorithm,
    limit: (key, limitOptions) => decide(wrapped, key, limitOptions, true),
    peek: (key, peekOptions) => decide(wrapped, key, peekOptions, false),
    async reset(key) {
      checkKey(key);
      fallback?.reset(key);
      await guarded(wrapped, () => limiter.reset(key), `reset '${key}'`);
    },
    stats: (): FailureStats => ({ ...counts, breakerOpens: breaker.opens, breaker: breaker.state }),
    async close() {
      unfollow?.();
      await Promise.all([limiter.close(), fallback?.close()]);
    },
  };
  const { sync } = wrapped;
  if (sync) {
    policyLimiter.tryLimit = (key, limitOptions) => {
      const decision = sync.tryLimit(key, limitOptions);
      if (decision === undefined) return undefined;
      counts.decisions++;
      counts.localDecisions++;
      fallback?.blocks.observe(key, decision);
      return shadowed(wrapped, key, costOf(limitOptions), decision);
    };
  }
  const { refund } = limiter;
  if (refund) {
    policyLimiter.refund = async (key, units, refundOptions) => {
      checkKey(key);
      await guarded(wrapped, () => refund.call(limiter, key, units, refundOptions), `refund '${key}'`);
    };
  }
  const { charge } = limiter;
  if (charge) {
    policyLimiter.charge = async (key, units, chargeOptions) => {
      checkKey(key);
      await guarded(wrapped, () => charge.call(limiter, key, units, chargeOptions), `charge '${key}'`);
    };
  }
  const { algorithmFor: innerAlgorithmFor } = limiter;
  if (innerAlgorithmFor) policyLimiter.algorithmFor = (params) => innerAlgorithmFor.call(limiter, params);
  for (const operation of ADMIN_OPERATIONS) {
    const run = limiter[operation] as AdminCall | undefined;
    if (run) policyLimiter[operation] = guardedAdmin(wrapped, operation, run);
  }
  return forwardOptional(limiter, policyLimiter);
}

const ADMIN_OPERATIONS = ['block', 'unblock', 'penalty', 'reward', 'invalidate'] as const;
type AdminCall = (key: string, amount?: number) => Promise<void>;

/**
 * An admin operation under the deadline and breaker, like `reset`: no policy can answer it in the
 * store's place, so it rejects with StoreUnavailableError rather than hang on a paused store.
 */
function guardedAdmin(wrapped: Wrapped, operation: (typeof ADMIN_OPERATIONS)[number], run: AdminCall): AdminCall {
  const { limiter } = wrapped;
  const blocks = wrapped.settings.fallback?.blocks;
  return async (key, amount) => {
    checkKey(key);
    // Known to the local fallback whether or not the store takes it: a block the store missed
    // still holds here while the store is down.
    if (blocks && operation === 'block') blocks.block(key, blockMsOf(amount));
    if (blocks && operation === 'unblock') blocks.forget(key);
    await guarded(wrapped, () => run.call(limiter, key, amount), `${operation} '${key}'`);
  };
}

/** One `limit` (`commit`) or `peek`: the wrapped limiter's sync path, else the store under the deadline and breaker. */
async function decide(
  wrapped: Wrapped,
  key: string,
  options: LimitOptions | undefined,
  commit: boolean,
): Promise<Decision> {
  const { settings, counts, sync } = wrapped;
  checkKey(key);
  const cost = commit ? costOf(options) : 1;
  // Checked here too, so a policy never answers for params the store would refuse.
  const { limit } = algorithmFor(wrapped.limiter.algorithm, options?.params);
  const mode = options?.failure === undefined ? settings.defaultMode : settings.modeOf(options.failure);
  counts.decisions++;
  const served = commit ? sync?.tryLimit(key, options) : undefined;
  if (served) {
    counts.localDecisions++;
    settings.fallback?.blocks.observe(key, served);
    return shadowed(wrapped, key, cost, served);
  }
  const askedAt = settings.fallback?.blocks.mark();
  const decision = await askStore(wrapped, key, options, commit, mode, cost, limit);
  settings.fallback?.blocks.observe(key, decision, askedAt);
  return commit ? shadowed(wrapped, key, cost, decision) : decision;
}

// The store's decision, or the policy's when the breaker is open or the store fails or is late.
async function askStore(
  wrapped: Wrapped,
  key: string,
  options: LimitOptions | undefined,
  commit: boolean,
  mode: FailureMode,
  cost: number,
  limit: number,
): Promise<Decision> {
  const { settings, counts, limiter } = wrapped;
  const { params } = options ?? {};
  const partial = commit && partialOf(options);
  const { breaker } = settings;
  const ticket = breaker.acquire();
  if (ticket === undefined) {
    counts.breakerRejections++;
    return degrade(wrapped, { reason: 'breaker-open', mode, key, cost, commit, partial, params, limit });
  }
  counts.storeCalls++;
  let outcome: Decision | typeof TIMED_OUT;
  try {
    const call = commit
      ? limiter.limit(key, options)
      : limiter.peek(key, params === undefined ? undefined : { params });
    outcome = await withDeadline(call, settings.deadlineMs, wrapped.onLate);
  } catch (error) {
    if (!isSluiceError(error, 'ERR_SLUICE_STORE_UNAVAILABLE')) {
      breaker.released(ticket);
      throw error;
    }
    breaker.failed(ticket);
    const reason = reasonOf(error);
    if (reason === 'connection') counts.connectionErrors++;
    else counts.scriptErrors++;
    return degrade(wrapped, { reason, mode, key, cost, commit, partial, params, limit, error });
  }
  if (outcome === TIMED_OUT) {
    breaker.failed(ticket);
    counts.timeouts++;
    return degrade(wrapped, { reason: 'timeout', mode, key, cost, commit, partial, params, limit });
  }
  breaker.succeeded(ticket);
  return outcome;
}

// A store call no policy can answer for: under the deadline and the breaker, or rejected.
async function guarded(wrapped: Wrapped, run: () => Promise<void>, what: string): Promise<void> {
  const { breaker, deadlineMs } = wrapped.settings;
  const ticket = breaker.acquire();
  if (ticket === undefined) throw new StoreUnavailableError(`circuit breaker open: could not ${what}`);
  let timedOut: boolean;
  try {
    timedOut = (await withDeadline(run(), deadlineMs, wrapped.onLate)) === TIMED_OUT;
  } catch (error) {
    if (isSluiceError(error, 'ERR_SLUICE_STORE_UNAVAILABLE')) breaker.failed(ticket);
    else breaker.released(ticket);
    throw error;
  }
  if (timedOut) {
    breaker.failed(ticket);
    wrapped.counts.timeouts++;
    throw new StoreUnavailableError(`the store did not answer within ${deadlineMs} ms: could not ${what}`);
  }
  breaker.succeeded(ticket);
}

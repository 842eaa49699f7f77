import { TIMED_OUT, withDeadline } from '../deadline.js';
import type { Decision, DegradedReason, FailureMode, LimitOptions } from '../decision.js';
import { ConfigError, isSluiceError, StoreUnavailableError } from '../errors.js';
import { type Clock, type Limiter, monotonicClock } from '../limiter.js';
import {
  checkKey,
  costOf,
  optionalBoolean,
  orDefault,
  requireDurationMs,
  requireFunction,
  requireLimiter,
  requireOptions,
} from '../validate.js';
import { createWarner, type WarningSink } from '../warnings.js';
import { type BreakerOptions, type BreakerState, createBreaker } from './breaker.js';
import { createLocalFallback, type LocalFallbackOptions } from './fallback.js';
import { failClosed, failOpen, reasonOf } from './policies.js';

/** Options of {@link withFailurePolicy}. */
export interface FailurePolicyOptions {
  /**
   * What to answer when the store cannot decide; each call may override it with
   * `{ failure }`. Default `'fallback'` when `fallback` is given, else `'open'` (as Envoy's
   * rate limit filter). Ask: if this limiter vanished for ten minutes, what happens? "A large
   * bill" or "data corruption": `'closed'`. "Elevated load": `'open'`.
   */
  failure?: FailureMode;
  /** The local limiter used by the `'fallback'` policy: limit ÷ instances. */
  fallback?: LocalFallbackOptions;
  /**
   * Milliseconds a decision may wait for the store before the policy answers (a timer).
   * Integer in 1..2^31 − 1; default 50.
   */
  deadlineMs?: number;
  /** The circuit breaker: K consecutive failures open it for a cool-down, then one probe. */
  breaker?: BreakerOptions;
  /**
   * Shadow mode: decide and count as usual, but admit every request that would be denied
   * (counted in `stats().shadowDenied`, reported to `onShadowDeny`). A would-be denial charges
   * nothing, as any denial. Applies to `limit`, not `peek`.
   */
  shadow?: boolean;
  /**
   * Called synchronously for every degraded decision. Wire it (or poll `stats()`): a limiter
   * that quietly fails open is a limiter you no longer have. A throw from it is swallowed, so
   * a logging bug cannot turn a degradation into an outage.
   */
  onDegraded?: (event: DegradedEvent) => void;
  /** Called for every request shadow mode admitted although the limiter denied it. Throws are swallowed. */
  onShadowDeny?: (event: ShadowDenyEvent) => void;
  /**
   * Where warnings go. Without `onDegraded`, the first degraded decision warns once
   * (code `SLUICE_DEGRADED`) so the degradation is never silent. Default `process.emitWarning`;
   * `false` turns warnings off.
   */
  onWarning?: WarningSink;
  /** Milliseconds clock for the breaker and the local fallback; default monotonic. */
  clock?: Clock;
}

/** One degraded decision, as told to `onDegraded`. */
export interface DegradedEvent {
  reason: DegradedReason;
  /** The policy that answered. */
  failure: FailureMode;
  key: string;
  cost: number;
  /** What the policy answered (before shadow mode). */
  allowed: boolean;
  /** The store's error, for `'connection'` and `'script-error'`. */
  error?: StoreUnavailableError;
  /** The instance count the local fallback divided by, for `'fallback'`. */
  instances?: number;
}

/** A request that shadow mode admitted although it was denied. */
export interface ShadowDenyEvent {
  key: string;
  cost: number;
  /** The denial, as it would have been returned. */
  decision: Decision;
}

/** Counters since creation (a snapshot). */
export interface FailureStats {
  /** `limit` and `peek` calls answered. */
  decisions: number;
  /** Calls that reached the wrapped limiter's asynchronous path (the store, unless a lease served it). */
  storeCalls: number;
  /**
   * Decisions the wrapped limiter took synchronously, without I/O, through its `tryLimit` (lease
   * hits and cached refusals of a leased limiter): no deadline, no breaker, served during an outage too.
   */
  localDecisions: number;
  /** Degraded decisions that admitted. */
  degradedAllowed: number;
  /** Degraded decisions that denied. */
  degradedDenied: number;
  /** Calls whose reply missed the deadline. */
  timeouts: number;
  /** Calls that failed on the connection. */
  connectionErrors: number;
  /** Calls that failed on a script error or an unreadable reply. */
  scriptErrors: number;
  /** Calls answered without asking the store because the breaker was open. */
  breakerRejections: number;
  /** Times the breaker opened (a failed half-open probe opens it again and counts). */
  breakerOpens: number;
  /** Replies (or errors) that arrived after their deadline and were discarded. */
  lateReplies: number;
  /** Requests admitted by shadow mode although they were denied. */
  shadowDenied: number;
  /** The breaker's state now. */
  breaker: BreakerState;
}

/** A {@link Limiter} that answers by its failure policy when the store cannot decide. */
export interface PolicyLimiter extends Limiter {
  /** Like `Limiter.peek`, with an optional per-call failure policy. */
  peek(key: string, options?: Pick<LimitOptions, 'failure'>): Promise<Decision>;
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

const MODES: readonly FailureMode[] = ['open', 'closed', 'fallback'];

/**
 * Wraps any limiter so that a failing store turns into a policy instead of an error:
 *
 * - **deadline**: a decision waits at most `deadlineMs` (default 50) for the store; a late
 *   reply is discarded and never decided on twice. The store may still apply a late script,
 *   so a unit may have been charged remotely for a request the policy answered.
 * - **policy**: `'open'` admits, `'closed'` denies (retryAfterMs = the breaker's remaining
 *   cool-down), `'fallback'` decides on a local limiter at limit ÷ N (N fixed or live from
 *   `createHeartbeat`). Only store failures ({@link StoreUnavailableError}, timeouts) reach the
 *   policy; an ordinary denial is returned as is, and other errors (invalid key or cost) reject.
 * - **circuit breaker**: K consecutive failures open it; while open no call waits on the store;
 *   after the cool-down exactly one probe goes through, and its success closes the breaker.
 * - **loud**: degraded decisions carry `degraded: true`, `degradedReason` and `failure`;
 *   `onDegraded` and `stats()` count them.
 * - **shadow mode**: count would-be denials, deny nothing.
 *
 * Wrap a leased limiter (not the other way round) so that unexpired leases keep serving
 * during a blip before any policy applies: when the wrapped limiter has a synchronous
 * `tryLimit`, every call tries it first, so lease hits and cached refusals pay no deadline
 * timer and are served even while the breaker is open. `refund` and `reset` go to the store
 * under the same deadline and breaker, and reject with {@link StoreUnavailableError} when it
 * cannot answer (no policy can refund). `close()` closes the wrapped limiter too.
 *
 * @throws {ConfigError} when `limiter` is not a Limiter, on invalid options (naming the option;
 * durations above 2^31 − 1 ms included), `failure: 'fallback'` without `fallback`, or an
 * algorithm the local fallback cannot divide. Calls reject with `ConfigError` for an unknown
 * per-call `failure`, and with the wrapped limiter's typed errors for invalid keys and costs.
 */
export function withFailurePolicy(limiter: Limiter, options: FailurePolicyOptions = {}): PolicyLimiter {
  requireLimiter('limiter', limiter);
  requireOptions('withFailurePolicy options', options);
  const clock = requireFunction('clock', orDefault(options.clock, monotonicClock));
  const deadlineMs = requireDurationMs('deadlineMs', orDefault(options.deadlineMs, 50));
  const breaker = createBreaker(requireOptions('breaker', orDefault(options.breaker, {})), clock);
  const fallback =
    options.fallback === undefined
      ? undefined
      : createLocalFallback(limiter.algorithm, requireOptions('fallback', options.fallback), clock);
  const modeOf = (mode: unknown): FailureMode => {
    if (!MODES.includes(mode as FailureMode)) throw new ConfigError(`failure must be one of ${MODES.join(', ')}`);
    if (mode === 'fallback' && !fallback) throw new ConfigError("failure 'fallback' needs the fallback option");
    return mode as FailureMode;
  };
  const defaultMode = modeOf(orDefault(options.failure, fallback ? 'fallback' : 'open'));
  const onDegraded = requireFunction('onDegraded', options.onDegraded, true);
  const onShadowDeny = requireFunction('onShadowDeny', options.onShadowDeny, true);
  const shadow = optionalBoolean('shadow', options.shadow, false);
  const warn = createWarner(options.onWarning);
  const limit = limiter.algorithm.limit;
  const candidate = limiter as Limiter & Partial<SyncPath>;
  const sync = typeof candidate.tryLimit === 'function' ? (candidate as Limiter & SyncPath) : undefined;
  const counts = {
    decisions: 0,
    storeCalls: 0,
    localDecisions: 0,
    degradedAllowed: 0,
    degradedDenied: 0,
    timeouts: 0,
    connectionErrors: 0,
    scriptErrors: 0,
    breakerRejections: 0,
    lateReplies: 0,
    shadowDenied: 0,
  };
  const onLate = () => {
    counts.lateReplies++;
  };

  const degrade = (
    reason: DegradedReason,
    mode: FailureMode,
    key: string,
    cost: number,
    commit: boolean,
    error?: StoreUnavailableError,
  ): Decision => {
    let decision: Decision;
    let instances: number | undefined;
    if (mode === 'open') decision = failOpen(limit, commit ? cost : 0);
    else if (mode === 'closed') decision = failClosed(limit, cost, breaker.retryInMs());
    else {
      const local = (fallback as NonNullable<typeof fallback>).current();
      instances = local.instances;
      decision = commit ? local.limiter.limitSync(key, { cost }) : local.limiter.peekSync(key);
      // Never possible on the local share, but possible once the store is back.
      if (decision.retryAfterMs === Number.POSITIVE_INFINITY && cost <= limit) {
        decision.retryAfterMs = breaker.retryInMs();
      }
    }
    decision.degraded = true;
    decision.degradedReason = reason;
    decision.failure = mode;
    if (decision.allowed) counts.degradedAllowed++;
    else counts.degradedDenied++;
    if (onDegraded) {
      const event: DegradedEvent = { reason, failure: mode, key, cost, allowed: decision.allowed };
      if (error) event.error = error;
      if (instances !== undefined) event.instances = instances;
      swallow(() => onDegraded(event));
    } else {
      warn(
        'SLUICE_DEGRADED',
        `Sluice: the store could not decide (${reason}); decisions are degraded to '${mode}'. ` +
          'Pass onDegraded to withFailurePolicy to observe them (onWarning: false silences this warning).',
      );
    }
    return decision;
  };

  const shadowed = (key: string, cost: number, decision: Decision): Decision => {
    if (!shadow || decision.allowed) return decision;
    counts.shadowDenied++;
    if (onShadowDeny) swallow(() => onShadowDeny({ key, cost, decision: { ...decision } }));
    return { ...decision, allowed: true, retryAfterMs: 0 };
  };

  const decide = async (key: string, options: LimitOptions | undefined, commit: boolean): Promise<Decision> => {
    checkKey(key);
    const cost = commit ? costOf(options) : 1;
    const mode = options?.failure === undefined ? defaultMode : modeOf(options.failure);
    counts.decisions++;
    const served = commit ? sync?.tryLimit(key, options) : undefined;
    if (served) {
      counts.localDecisions++;
      return shadowed(key, cost, served);
    }
    const ticket = breaker.acquire();
    if (ticket === undefined) {
      counts.breakerRejections++;
      const decision = degrade('breaker-open', mode, key, cost, commit);
      return commit ? shadowed(key, cost, decision) : decision;
    }
    counts.storeCalls++;
    let outcome: Decision | typeof TIMED_OUT;
    try {
      outcome = await withDeadline(commit ? limiter.limit(key, options) : limiter.peek(key), deadlineMs, onLate);
    } catch (error) {
      if (!isSluiceError(error, 'ERR_SLUICE_STORE_UNAVAILABLE')) {
        breaker.released(ticket);
        throw error;
      }
      breaker.failed(ticket);
      const reason = reasonOf(error);
      if (reason === 'connection') counts.connectionErrors++;
      else counts.scriptErrors++;
      const decision = degrade(reason, mode, key, cost, commit, error);
      return commit ? shadowed(key, cost, decision) : decision;
    }
    if (outcome === TIMED_OUT) {
      breaker.failed(ticket);
      counts.timeouts++;
      const decision = degrade('timeout', mode, key, cost, commit);
      return commit ? shadowed(key, cost, decision) : decision;
    }
    breaker.succeeded(ticket);
    return commit ? shadowed(key, cost, outcome) : outcome;
  };

  // A store call no policy can answer for: under the deadline and the breaker, or rejected.
  const guarded = async (run: () => Promise<void>, what: string): Promise<void> => {
    const ticket = breaker.acquire();
    if (ticket === undefined) throw new StoreUnavailableError(`circuit breaker open: could not ${what}`);
    let timedOut: boolean;
    try {
      timedOut = (await withDeadline(run(), deadlineMs, onLate)) === TIMED_OUT;
    } catch (error) {
      if (isSluiceError(error, 'ERR_SLUICE_STORE_UNAVAILABLE')) breaker.failed(ticket);
      else breaker.released(ticket);
      throw error;
    }
    if (timedOut) {
      breaker.failed(ticket);
      counts.timeouts++;
      throw new StoreUnavailableError(`the store did not answer within ${deadlineMs} ms: could not ${what}`);
    }
    breaker.succeeded(ticket);
  };

  const policyLimiter: PolicyLimiter = {
    algorithm: limiter.algorithm,
    limit: (key, limitOptions) => decide(key, limitOptions, true),
    peek: (key, peekOptions) => decide(key, peekOptions, false),
    async reset(key) {
      checkKey(key);
      fallback?.reset(key);
      await guarded(() => limiter.reset(key), `reset '${key}'`);
    },
    stats: () => ({ ...counts, breakerOpens: breaker.opens, breaker: breaker.state }),
    async close() {
      await Promise.all([limiter.close(), fallback?.close()]);
    },
  };
  if (sync) {
    policyLimiter.tryLimit = (key, limitOptions) => {
      const decision = sync.tryLimit(key, limitOptions);
      if (decision === undefined) return undefined;
      counts.decisions++;
      counts.localDecisions++;
      return shadowed(key, costOf(limitOptions), decision);
    };
  }
  const { refund } = limiter;
  if (refund) {
    policyLimiter.refund = async (key, units) => {
      checkKey(key);
      await guarded(() => refund.call(limiter, key, units), `refund '${key}'`);
    };
  }
  return policyLimiter;
}

function swallow(run: () => void): void {
  try {
    run();
  } catch {
    // A callback's bug must not change the decision.
  }
}

import type { Algorithm } from '../algorithms/types.js';
import type { Decision, DegradedReason, FailureMode } from '../decision.js';
import { ConfigError, type StoreUnavailableError } from '../errors.js';
import { type Clock, monotonicClock } from '../limiter.js';
import {
  type OptionNames,
  optionalBoolean,
  orDefault,
  requireDurationMs,
  requireFunction,
  requireOptions,
} from '../validate.js';
import { createWarner, type Warner, type WarningSink } from '../warnings.js';
import { type Breaker, type BreakerOptions, createBreaker } from './breaker.js';
import { createLocalFallback, type LocalFallback, type LocalFallbackOptions } from './fallback.js';

/** Options of `withFailurePolicy`. */
export interface FailurePolicyOptions {
  /**
   * What to answer when the store cannot decide; each call may override it with
   * `{ failure }`. Default `'fallback'` when `fallback` is given, else `'open'` (as Envoy's
   * rate limit filter). Ask: if this limiter vanished for ten minutes, what happens? "A large
   * bill" or "data corruption": `'closed'`. "Elevated load": `'open'`.
   */
  failure?: FailureMode;
  /**
   * The local limiter used by the `'fallback'` policy: limit ÷ instances. It denies the keys whose
   * block this process knows of (issued through this limiter's `block`, or met in a store
   * decision with `reason: 'blocked'`) until the block ends; a block made elsewhere and never met
   * here is unknown to it (docs/failure-modes.md).
   */
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

/** Options with defaults applied, checked, and the breaker and local fallback they describe. */
export interface PolicySettings {
  deadlineMs: number;
  breaker: Breaker;
  /** Undefined without the `fallback` option. */
  fallback: LocalFallback | undefined;
  defaultMode: FailureMode;
  /** Checks a per-call `failure`. @throws {ConfigError} for an unknown or unusable mode. */
  modeOf(mode: unknown): FailureMode;
  shadow: boolean;
  onDegraded: ((event: DegradedEvent) => void) | undefined;
  onShadowDeny: ((event: ShadowDenyEvent) => void) | undefined;
  warn: Warner;
}

const MODES: readonly FailureMode[] = ['open', 'closed', 'fallback'];

const BREAKER_OPTION_NAMES: OptionNames<BreakerOptions> = { failureThreshold: true, coolDownMs: true };
const FALLBACK_OPTION_NAMES: OptionNames<LocalFallbackOptions> = { instances: true, algorithm: true, maxKeys: true };
const FAILURE_POLICY_OPTION_NAMES: OptionNames<FailurePolicyOptions> = {
  failure: true,
  fallback: true,
  deadlineMs: true,
  breaker: true,
  shadow: true,
  onDegraded: true,
  onShadowDeny: true,
  onWarning: true,
  clock: true,
};

/** @throws {ConfigError} on any invalid option, naming it. */
export function readPolicyOptions(algorithm: Algorithm, options: FailurePolicyOptions): PolicySettings {
  requireOptions('withFailurePolicy options', options, FAILURE_POLICY_OPTION_NAMES);
  const clock = requireFunction('clock', orDefault(options.clock, monotonicClock));
  const deadlineMs = requireDurationMs('deadlineMs', orDefault(options.deadlineMs, 50));
  const breaker = createBreaker(requireOptions('breaker', orDefault(options.breaker, {}), BREAKER_OPTION_NAMES), clock);
  const fallback =
    options.fallback === undefined
      ? undefined
      : createLocalFallback(algorithm, requireOptions('fallback', options.fallback, FALLBACK_OPTION_NAMES), clock);
  const modeOf = (mode: unknown): FailureMode => {
    if (!MODES.includes(mode as FailureMode)) throw new ConfigError(`failure must be one of ${MODES.join(', ')}`);
    if (mode === 'fallback' && !fallback) throw new ConfigError("failure 'fallback' needs the fallback option");
    return mode as FailureMode;
  };
  return {
    deadlineMs,
    breaker,
    fallback,
    defaultMode: modeOf(orDefault(options.failure, fallback ? 'fallback' : 'open')),
    modeOf,
    onDegraded: requireFunction('onDegraded', options.onDegraded, true),
    onShadowDeny: requireFunction('onShadowDeny', options.onShadowDeny, true),
    shadow: optionalBoolean('shadow', options.shadow, false),
    warn: createWarner(options.onWarning),
  };
}

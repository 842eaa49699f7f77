import { ConfigError } from '../errors.js';
import { type Clock, type Limiter, monotonicClock } from '../limiter.js';
import {
  MAX_TIMER_MS,
  type OptionNames,
  optionalBoolean,
  orDefault,
  requireDurationMs,
  requireFunction,
  requireInteger,
  requireLimiter,
  requireOptions,
} from '../validate.js';
import { createWarner, type Warner, type WarningSink } from '../warnings.js';

/** Options of `createLeasedLimiter`. */
export interface LeasedLimiterOptions {
  /**
   * The limiter that owns the quota: any {@link Limiter} (Redis, memory, another wrapper) whose
   * algorithm admits a cost. Closed by the leased limiter's `close()`.
   */
  remote: Limiter;
  /**
   * Units asked for per lease: an integer in 1..`remote.algorithm.limit`. 1 asks the remote on
   * every admission, like the remote alone. Sizing rule: at most limit / (4 × instances)
   * keeps the worst-case error under a quarter of the limit (docs/leasing.md).
   */
  leaseSize: number;
  /**
   * Shrink leases toward 1 when the remote held fewer than `adaptiveDivisor` leases' worth at
   * this instance's last reply, so that little quota is stranded at exhaustion. Default false.
   */
  adaptive?: boolean;
  /** Divisor of the adaptive rule: lease = ⌊remaining / adaptiveDivisor⌋ below that mark. Integer ≥ 2, default 4. */
  adaptiveDivisor?: number;
  /**
   * Return a key's unspent units to the remote once nobody has asked for it for this many ms
   * (on the limiter's clock). 0 (default) never returns on idle; `close()` always returns.
   * Needs a remote with `refund` (GCRA, token bucket): a ConfigError otherwise. Set it on every
   * instance of the fleet: it also caps how long a cached refusal is trusted, so that units
   * another instance returns are seen within `returnIdleMs`.
   */
  returnIdleMs?: number;
  /**
   * Real-time period (ms) of the one unref'd timer that looks for idle keys: 0..2^31 − 1, default
   * half of `returnIdleMs` (at least 1, at most 2^31 − 1). 0 turns the timer off: call
   * `returnIdle()` yourself (tests with an injected clock do).
   */
  returnCheckIntervalMs?: number;
  /** Most keys held locally (keys are often attacker-controlled). Default 100,000. */
  maxKeys?: number;
  /** Milliseconds clock, never going backwards; default monotonic `performance.now()`. */
  clock?: Clock;
  /**
   * Where warnings go. At construction the limiter warns once (`SLUICE_LEASE_NO_INVALIDATIONS`)
   * when `remote` has no `invalidations` (a Redis limiter built without `subscriber`): then a
   * `reset`, `block` or `invalidate` made on another instance does not reach the units this one
   * holds on lease. Give the Redis limiter a `subscriber`; `false` silences it for one instance
   * alone. Default `process.emitWarning`.
   */
  onWarning?: WarningSink;
}

/** Options with defaults applied, checked. */
export interface LeaseSettings {
  remote: Limiter;
  leaseSize: number;
  /** 0 when adaptive sizing is off. */
  adaptiveDivisor: number;
  returnIdleMs: number;
  returnCheckIntervalMs: number;
  maxKeys: number;
  clock: Clock;
  warn: Warner;
}

const LEASED_LIMITER_OPTION_NAMES: OptionNames<LeasedLimiterOptions> = {
  remote: true,
  leaseSize: true,
  adaptive: true,
  adaptiveDivisor: true,
  returnIdleMs: true,
  returnCheckIntervalMs: true,
  maxKeys: true,
  clock: true,
  onWarning: true,
};

/** @throws {ConfigError} on any invalid option. */
export function readLeaseOptions(options: LeasedLimiterOptions): LeaseSettings {
  requireOptions('createLeasedLimiter options', options, LEASED_LIMITER_OPTION_NAMES);
  const remote = requireLimiter('remote', options.remote);
  const leaseSize = requireInteger('leaseSize', options.leaseSize, 1, remote.algorithm.limit);
  const adaptive = optionalBoolean('adaptive', options.adaptive, false);
  const divisor = requireInteger('adaptiveDivisor', orDefault(options.adaptiveDivisor, 4), 2);
  const returnIdleMs = requireInteger('returnIdleMs', orDefault(options.returnIdleMs, 0), 0);
  if (returnIdleMs > 0 && typeof remote.refund !== 'function') {
    throw new ConfigError(`returnIdleMs needs a remote that takes refunds; '${remote.algorithm.name}' does not`);
  }
  // The default check period is capped to what a timer can wait; the idle time itself is not a timer.
  const defaultCheckMs = Math.min(MAX_TIMER_MS, Math.max(1, Math.floor(returnIdleMs / 2)));
  return {
    remote,
    leaseSize,
    adaptiveDivisor: adaptive ? divisor : 0,
    returnIdleMs,
    returnCheckIntervalMs: requireDurationMs(
      'returnCheckIntervalMs',
      orDefault(options.returnCheckIntervalMs, defaultCheckMs),
      0,
    ),
    maxKeys: requireInteger('maxKeys', orDefault(options.maxKeys, 100_000)),
    clock: requireFunction('clock', orDefault(options.clock, monotonicClock)),
    warn: createWarner(options.onWarning),
  };
}

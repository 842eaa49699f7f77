import { type Decision, neverAdmitted } from '../decision.js';
import { ConfigError } from '../errors.js';
import { type OptionNames, orDefault, requireInteger, requireOptions } from '../validate.js';
import { ceilDiv, floorDiv } from './integer.js';
import { paramsResolver } from './params.js';
import { share } from './share.js';
import type { Algorithm } from './types.js';

/** Options of {@link gcra}. */
export interface GcraOptions {
  /** Sustained rate: `limit` units per `periodMs`. Integer ≥ 1. */
  limit: number;
  /** Period of the sustained rate, in milliseconds. Integer ≥ 1. */
  periodMs: number;
  /** Units a fresh key may spend at once. Integer ≥ 1; defaults to `limit`. */
  burst?: number;
}

const MAX_PERIOD_MS = 10 * 365 * 24 * 3600 * 1000;

const GCRA_OPTION_NAMES: OptionNames<GcraOptions> = { limit: true, periodMs: true, burst: true };

/**
 * GCRA, the Generic Cell Rate Algorithm (ITU-T I.371, virtual scheduling form): the default.
 *
 * State is one number per key, the theoretical arrival time (TAT), kept in integer
 * microseconds. The emission interval is T = periodMs / limit (rounded up to a whole µs, so
 * the rate is never exceeded). A request of cost c at time t is admitted when
 * `max(TAT, t) + c·T − burst·T ≤ t`, and then TAT becomes `max(TAT, t) + c·T`.
 *
 * Guarantees: a fresh key admits exactly `burst` units at once; over any interval of length Δ
 * at most `burst + ⌊Δ / T⌋` units are admitted. `burst` counts the units of the first burst
 * (other libraries' "burst" is sometimes this minus one: their burst tolerance τ = (burst − 1)·T).
 *
 * Pros: one number per key, smooth (no window boundary), exact retry-after. Cons: "per period"
 * is a rate, not a calendar quota.
 *
 * Resolution: the emission interval is held in whole µs, so the finest rate is 1 unit per µs
 * (`limit ≤ periodMs × 1000`); a finer rate is a ConfigError rather than a silently slower one.
 *
 * @throws {ConfigError} when options is not an object, limit, periodMs or burst is not a
 * positive integer (`null` included), or the rate is finer than 1 unit per µs.
 * @example
 * ```ts
 * import { createMemoryLimiter, gcra } from 'sluice';
 *
 * // 100 requests per minute, at most 20 back to back: one unit comes back every 600 ms.
 * const limiter = createMemoryLimiter({ algorithm: gcra({ limit: 100, periodMs: 60_000, burst: 20 }) });
 * const { allowed, retryAfterMs } = await limiter.limit('user:42');
 * ```
 */
export function gcra(options: GcraOptions): Algorithm {
  requireOptions('gcra options', options, GCRA_OPTION_NAMES);
  const limit = requireInteger('limit', options.limit);
  const periodMs = requireInteger('periodMs', options.periodMs, 1, MAX_PERIOD_MS);
  const burst = requireInteger('burst', orDefault(options.burst, limit));
  if (limit > periodMs * 1000) {
    throw new ConfigError(
      `limit ${limit} per ${periodMs} ms is an emission interval below 1 µs, the finest the stores hold: ` +
        `the finest rate is 1 unit per µs (limit at most periodMs × 1000 = ${periodMs * 1000})`,
    );
  }
  const intervalUs = Math.ceil((periodMs * 1000) / limit);
  // How far TAT may run ahead of now: burst tolerance τ plus one emission interval.
  const horizonUs = requireInteger('burst × emission interval (µs)', burst * intervalUs);

  const decision = (allowed: boolean, tatUs: number, nowUs: number, retryAfterMs: number): Decision => ({
    allowed,
    limit: burst,
    remaining: Math.max(0, floorDiv(horizonUs - (tatUs - nowUs), intervalUs)),
    retryAfterMs,
    resetAfterMs: ceilDiv(tatUs - nowUs, 1000),
  });

  return {
    name: 'gcra',
    limit: burst,
    horizonMs: Math.ceil(horizonUs / 1000),
    slots: 1,
    scriptParams: [intervalUs, burst],
    replenish: 'steady',
    // The emission interval grows N-fold, the burst shrinks N-fold.
    divide: (n) => gcraWithInterval(intervalUs * n, share(burst, n)),
    withParams: paramsResolver('gcra', ['limit', 'periodMs', 'burst'], options, gcra),
    decide(state, offset, nowMs, cost, commit) {
      const nowUs = nowMs * 1000;
      const tatUs = Math.max(state[offset] as number, nowUs);
      if (cost > burst) return neverAdmitted(decision(false, tatUs, nowUs, 0));
      const nextTatUs = tatUs + cost * intervalUs;
      const allowAtUs = nextTatUs - horizonUs;
      if (allowAtUs > nowUs) return decision(false, tatUs, nowUs, ceilDiv(allowAtUs - nowUs, 1000));
      if (commit && cost > 0) state[offset] = nextTatUs;
      return decision(true, nextTatUs, nowUs, 0);
    },
    freshAtMs(state, offset) {
      return Math.ceil((state[offset] as number) / 1000);
    },
    refund(state, offset, nowMs, units) {
      // TAT moves back by units × T; a TAT at or before now is already a fresh key.
      state[offset] = Math.max((state[offset] as number) - units * intervalUs, nowMs * 1000);
    },
    charge(state, offset, nowMs, units) {
      // TAT moves on by units × T from max(TAT, now), as an admission would, however far ahead.
      const tatUs = Math.max(state[offset] as number, nowMs * 1000);
      state[offset] = Math.min(tatUs + units * intervalUs, Number.MAX_SAFE_INTEGER);
    },
  };
}

/** GCRA with an exact emission interval: `gcra()` takes a rate, and 1000 units per `intervalUs` ms is one unit per `intervalUs` µs. */
function gcraWithInterval(intervalUs: number, burst: number): Algorithm {
  if (intervalUs % 1000 === 0) return gcra({ limit: 1, periodMs: intervalUs / 1000, burst });
  return gcra({ limit: 1000, periodMs: intervalUs, burst });
}

import type { Meter } from '@opentelemetry/api';
import type { Decision, LimitOptions } from '../decision.js';
import type { DegradedTransition } from '../degraded-spells.js';
import { ConfigError } from '../errors.js';
import { type Clock, type Limiter, monotonicClock } from '../limiter.js';
import { requireFunction, requireLimiter } from '../validate.js';
import { createDecisionTally } from './decision-tally.js';
import { createDegradedTracker } from './degraded-transitions.js';
import { forwardAll } from './forward.js';
import { observeLayerStats, type StatsSource } from './layer-stats.js';
import { ATTRIBUTES as A } from './names.js';
import { requireMeter, requireName } from './options.js';

/** Options of {@link instrument}. */
export interface InstrumentOptions {
  /** The meter the instruments are created on, e.g. `metrics.getMeter('sluice')`. */
  meter: Meter;
  /** The `sluice.limit` attribute: which limit this is (`'api'`, `'login'`). Default `'default'`. */
  name?: string;
  /**
   * An allowed decision is near the limit when `remaining < nearLimitRatio × limit` (Envoy's
   * near_limit): counted in `sluice.near_limit`. A number in 0..1; default 0.2; 0 counts none.
   */
  nearLimitRatio?: number;
  /**
   * Maps a key to a low-cardinality label (`sluice.label`), e.g. the caller's plan. Opt-in:
   * without it no attribute depends on the key, which is never an attribute itself. Called once
   * per decision; past 100 distinct labels, new ones count as `'other'`.
   */
  labelOf?: (key: string) => string;
  /**
   * Other layers of the stack whose `stats()` to report at collection, e.g. the leased limiter
   * under a failure policy. The instrumented limiter's own `stats()`, if any, is always reported.
   */
  layers?: readonly StatsSource[];
  /** Told when decisions turn degraded, and when they recover (with the count and duration in between). */
  onDegradedTransition?: (event: DegradedTransition) => void;
  /** Milliseconds clock for transition durations; default monotonic. */
  clock?: Clock;
}

/**
 * Instruments a limiter (or the top of a stack: `withFailurePolicy(createLeasedLimiter(…))`):
 * returns a limiter of the same type that forwards every member of `limiter` — optional ones
 * (`refund`, `tryLimit`, `limitSync`, `stats`, …) exactly when `limiter` has them, so an HTTP
 * layer still picks the same nested-limit strategy — and counts each decision of `limit`,
 * `limitSync` and `tryLimit` in OpenTelemetry metrics (see docs/observability.md). Counting is a
 * few increments per decision; the meter reads the totals when its reader collects. The raw key
 * is never an attribute.
 *
 * @throws {ConfigError} when `limiter` is not a Limiter, `meter` not a Meter, or an option is invalid.
 * @example
 * ```ts
 * import { metrics } from '@opentelemetry/api';
 * import { createMemoryLimiter, gcra } from 'sluice';
 * import { instrument } from 'sluice/otel';
 *
 * const limiter = instrument(
 *   createMemoryLimiter({ algorithm: gcra({ limit: 100, periodMs: 60_000 }), maxKeys: 10_000 }),
 *   { meter: metrics.getMeter('sluice'), name: 'api', labelOf: (key) => (key.startsWith('pro:') ? 'pro' : 'free') },
 * );
 * const decision = limiter.limitSync('pro:42');
 * ```
 */
export function instrument<T extends Limiter>(limiter: T, options: InstrumentOptions): T {
  requireLimiter('limiter', limiter);
  const meter = requireMeter(options);
  const name = requireName(options.name);
  const nearLimitRatio = options.nearLimitRatio ?? 0.2;
  if (typeof nearLimitRatio !== 'number' || !(nearLimitRatio >= 0 && nearLimitRatio <= 1)) {
    throw new ConfigError('nearLimitRatio must be a number in 0..1');
  }
  const labelOf = requireFunction('labelOf', options.labelOf, true);
  const clock = requireFunction('clock', options.clock ?? monotonicClock);
  const layers = options.layers ?? [];
  if (!Array.isArray(layers) || !layers.every((layer) => typeof layer?.stats === 'function')) {
    throw new ConfigError('layers must be an array of objects with a stats() method');
  }
  const algorithm = limiter.algorithm.name;
  const tally = createDecisionTally({ meter, name, algorithm, nearLimitRatio, labelOf });
  const track = createDegradedTracker(
    meter,
    { [A.limit]: name, [A.algorithm]: algorithm },
    clock,
    requireFunction('onDegradedTransition', options.onDegradedTransition, true),
  );
  const own = typeof (limiter as Partial<StatsSource>).stats === 'function' ? [limiter as unknown as StatsSource] : [];
  observeLayerStats(meter, { [A.limit]: name, [A.algorithm]: algorithm }, [...own, ...layers]);

  const seen = (decision: Decision, key: string, limitOptions: LimitOptions | undefined): Decision => {
    tally.record(decision, limitOptions?.cost ?? 1, key);
    track(decision);
    return decision;
  };
  const failed = (error: unknown): never => {
    tally.failed(error);
    throw error;
  };
  return withDecisionsCounted(limiter, seen, failed);
}

type Seen = (decision: Decision, key: string, limitOptions: LimitOptions | undefined) => Decision;

/** Every member forwarded; the three deciding ones also report each decision to `seen`. */
function withDecisionsCounted<T extends Limiter>(limiter: T, seen: Seen, failed: (error: unknown) => never): T {
  const instrumented = forwardAll(limiter);
  // The forwarded members are bound to `limiter`: call them directly on the hot path.
  const members = instrumented as Record<string, unknown> & Partial<Record<'limitSync' | 'tryLimit', Decide>>;
  const { limit } = instrumented;
  const { limitSync, tryLimit } = members;
  instrumented.limit = (key, limitOptions) =>
    limit(key, limitOptions).then((decision) => seen(decision, key, limitOptions), failed);
  if (typeof limitSync === 'function') {
    members.limitSync = (key: string, limitOptions?: LimitOptions) => {
      try {
        return seen(limitSync(key, limitOptions) as Decision, key, limitOptions);
      } catch (error) {
        return failed(error);
      }
    };
  }
  if (typeof tryLimit === 'function') {
    members.tryLimit = (key: string, limitOptions?: LimitOptions) => {
      const decision = tryLimit(key, limitOptions);
      return decision === undefined ? undefined : seen(decision, key, limitOptions);
    };
  }
  return instrumented;
}

type Decide = (key: string, limitOptions?: LimitOptions) => Decision | undefined;

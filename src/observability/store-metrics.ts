import type { Attributes, Counter, Histogram, Meter, Tracer } from '@opentelemetry/api';
import { ConfigError, StoreUnavailableError } from '../errors.js';
import { reasonOf } from '../policy/policies.js';
import type { ClientWrapper, ScriptClient, StoreOperation } from '../stores/redis/script.js';
import { ATTRIBUTES as A, METRICS } from './names.js';
import { requireMeter, requireName } from './options.js';
import { getOrAdd } from './series.js';
import { startStoreSpan } from './store-spans.js';

/** Options of {@link storeMetrics}. */
export interface StoreMetricsOptions {
  /** The meter the instruments are created on, e.g. `metrics.getMeter('sluice')`. */
  meter: Meter;
  /** The `sluice.limit` attribute of every sample: the name given to `instrument`. Default `'default'`. */
  name?: string;
  /**
   * When given, each round trip is also a client span `sluice.store <operation>` (a child of the
   * active span), with `sluice.decision.count` and, for decide and batch calls,
   * `sluice.decision.allowed` / `sluice.decision.denied`; a failure sets the error status.
   */
  tracer?: Tracer;
}

/** Why a store call failed, as the `sluice.error.kind` attribute. */
export type StoreErrorKind = 'timeout' | 'connection' | 'script-error';

/**
 * Times every Redis round trip: pass the result as `wrapClient` to `createRedisLimiter` or
 * `createHeartbeat`. Records `sluice.store.duration` (seconds; one sample per round trip,
 * `sluice.operation` decide | peek | batch | refund | charge | heartbeat, or an admin
 * operation: reset | block | unblock | penalty | reward | invalidate), `sluice.store.errors`
 * (by `sluice.error.kind`), and for `batch` calls `sluice.store.batch.size` (decisions per call).
 * A NOSCRIPT reply (the script cache was flushed; EVAL follows at once) is timed, not an error.
 *
 * @throws {ConfigError} when `meter` is not a Meter or `name` not a non-empty string.
 * @example
 * ```ts
 * import { metrics } from '@opentelemetry/api';
 * import { gcra } from 'sluice';
 * import { storeMetrics } from 'sluice/otel';
 * import { createRedisLimiter } from 'sluice/redis';
 * import { Redis } from 'ioredis';
 *
 * const meter = metrics.getMeter('sluice');
 * const limiter = createRedisLimiter({
 *   client: new Redis(),
 *   algorithm: gcra({ limit: 100, periodMs: 60_000 }),
 *   wrapClient: storeMetrics({ meter, name: 'api' }),
 * });
 * ```
 */
export function storeMetrics(options: StoreMetricsOptions): ClientWrapper {
  const meter = requireMeter(options);
  const name = requireName(options.name);
  const tracer = options.tracer;
  if (tracer !== undefined && typeof tracer?.startSpan !== 'function') {
    throw new ConfigError('tracer must be an OpenTelemetry Tracer (e.g. trace.getTracer("sluice"))');
  }
  const duration = meter.createHistogram(METRICS.storeDuration, {
    description: 'Duration of one Redis round trip (one script call).',
    unit: 's',
    advice: { explicitBucketBoundaries: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5] },
  });
  const errors = meter.createCounter(METRICS.storeErrors, {
    description: 'Redis round trips that failed, by kind.',
    unit: '{call}',
  });
  const batchSize = meter.createHistogram(METRICS.batchSize, {
    description: 'Decisions carried by one batched script call.',
    unit: '{decision}',
    advice: { explicitBucketBoundaries: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1000] },
  });
  return (client, operation) => timedClient(client, { name, operation, duration, errors, batchSize, tracer });
}

interface Timing {
  name: string;
  operation: StoreOperation;
  duration: Histogram;
  errors: Counter;
  batchSize: Histogram;
  tracer: Tracer | undefined;
}

function timedClient(client: ScriptClient, timing: Timing): ScriptClient {
  const { duration, errors, batchSize, operation, tracer } = timing;
  const attributes: Attributes = { [A.limit]: timing.name, [A.operation]: operation };
  const failedAttributes = new Map<StoreErrorKind, Attributes>();
  const failed = (kind: StoreErrorKind) =>
    getOrAdd(failedAttributes, kind, () => ({ ...attributes, [A.errorKind]: kind }));
  const timed = async (call: () => Promise<unknown>, keys: readonly string[]): Promise<unknown> => {
    const span = tracer && startStoreSpan(tracer, attributes, operation, keys.length);
    const startedAt = performance.now();
    try {
      const reply = await call();
      duration.record((performance.now() - startedAt) / 1000, attributes);
      if (operation === 'batch') batchSize.record(keys.length, attributes);
      span?.succeeded(reply);
      return reply;
    } catch (error) {
      const kind = isNoScript(error) ? undefined : errorKindOf(error);
      duration.record((performance.now() - startedAt) / 1000, kind ? failed(kind) : attributes);
      if (kind) errors.add(1, failed(kind));
      span?.failed(error, kind);
      throw error;
    }
  };
  return {
    evalsha: (sha, keys, args) => timed(() => client.evalsha(sha, keys, args), keys),
    eval: (source, keys, args) => timed(() => client.eval(source, keys, args), keys),
  };
}

/** A client error's kind: a client-side timeout, else as the failure policy classifies it. */
export function errorKindOf(error: unknown): StoreErrorKind {
  if (error instanceof Error && /timed? ?out/i.test(error.message)) return 'timeout';
  const reason = reasonOf(new StoreUnavailableError('store call failed', error));
  return reason === 'script-error' ? 'script-error' : 'connection';
}

function isNoScript(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('NOSCRIPT');
}

import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterEach, describe, expect, it } from 'vitest';
import { gcra } from '../../src/algorithms/gcra.js';
import { ConfigError } from '../../src/errors.js';
import { storeMetrics } from '../../src/observability/index.js';
import { createRedisLimiter } from '../../src/stores/redis/redis-limiter.js';
import { type RedisServer, startRedis } from '../support/redis-server.js';
import { createMeters } from './support/metrics.js';

// A span per Redis round trip, on the real tracing SDK, against a real redis-server.
const HOUR = 3_600_000;
const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setUp() {
  const redis: RedisServer = await startRedis();
  cleanups.push(() => redis.stop());
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  cleanups.push(() => provider.shutdown());
  const metrics = createMeters();
  cleanups.push(() => metrics.shutdown());
  const wrapClient = storeMetrics({ meter: metrics.meter, tracer: provider.getTracer('sluice'), name: 'api' });
  return { client: redis.connect(), exporter, wrapClient };
}

describe('store spans', () => {
  it('one client span per round trip, with the decision count and how many were admitted', async () => {
    const { client, exporter, wrapClient } = await setUp();
    const limiter = createRedisLimiter({ client, algorithm: gcra({ limit: 2, periodMs: HOUR }), wrapClient });
    for (let i = 0; i < 3; i++) await limiter.limit('k');
    const spans = exporter.getFinishedSpans();
    // The first EVALSHA finds no script (NOSCRIPT: not an error status), EVAL follows: 4 round trips.
    expect(spans.map((s) => s.name)).toEqual(Array(4).fill('sluice.store decide'));
    expect(spans.map((s) => s.kind)).toEqual([2, 2, 2, 2]); // SpanKind.CLIENT
    expect(spans[0]?.status.code).toBe(0);
    expect(spans[0]?.events.map((e) => e.name)).toEqual(['exception']);
    expect(
      spans.slice(1).map((s) => [s.attributes['sluice.decision.allowed'], s.attributes['sluice.decision.denied']]),
    ).toEqual([
      [1, 0],
      [1, 0],
      [0, 1],
    ]);
    for (const span of spans) {
      expect(span.attributes).toMatchObject({
        'sluice.limit': 'api',
        'sluice.operation': 'decide',
        'sluice.decision.count': 1,
      });
    }
  });

  it('a batch of three decisions is one span with a count of 3', async () => {
    const { client, exporter, wrapClient } = await setUp();
    const limiter = createRedisLimiter({
      client,
      algorithm: gcra({ limit: 2, periodMs: HOUR }),
      wrapClient,
      batch: true,
    });
    await limiter.limit('warm-up'); // loads the script
    exporter.reset();
    await Promise.all([limiter.limit('k'), limiter.limit('k'), limiter.limit('k')]);
    const spans = exporter.getFinishedSpans();
    expect(spans).toHaveLength(1);
    expect(spans[0]?.attributes).toMatchObject({
      'sluice.operation': 'batch',
      'sluice.decision.count': 3,
      'sluice.decision.allowed': 2,
      'sluice.decision.denied': 1,
    });
  });

  it('a failed round trip sets the error status and kind', async () => {
    const { client, exporter, wrapClient } = await setUp();
    const limiter = createRedisLimiter({ client, algorithm: gcra({ limit: 2, periodMs: HOUR }), wrapClient });
    client.disconnect();
    await expect(limiter.limit('k')).rejects.toThrow();
    const [span] = exporter.getFinishedSpans();
    expect(span?.status.code).toBe(2); // SpanStatusCode.ERROR
    expect(span?.attributes['sluice.error.kind']).toBe('connection');
  });

  it('rejects a tracer that is not one', () => {
    const { meter } = createMeters();
    expect(() => storeMetrics({ meter, tracer: {} as never })).toThrow(ConfigError);
  });
});

import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { parseExposition } from '../../demo/fleet/exposition.js';
import { gcra } from '../../src/algorithms/gcra.js';
import { InvalidKeyError, StoreUnavailableError } from '../../src/errors.js';
import { createLeasedLimiter } from '../../src/lease/leased-limiter.js';
import { instrument, METRICS, storeMetrics } from '../../src/observability/index.js';
import { withFailurePolicy } from '../../src/policy/index.js';
import { createRedisLimiter } from '../../src/stores/redis/redis-limiter.js';
import { disconnectAll, resilientClient } from '../policy/support/clients.js';
import { freePort, type RedisServer, startRedis } from '../support/redis-server.js';

/*
 * The docs/observability.md recipe, scraped over real HTTP on loopback: every documented
 * metric is on the endpoint, under its Prometheus name, with the value the run produced.
 */
const HOUR = 3_600_000;
const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  disconnectAll();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('Prometheus recipe', () => {
  it('exposes every documented metric with the values of the run', async () => {
    const redis: RedisServer = await startRedis();
    cleanups.push(() => redis.stop());
    const port = await freePort();
    const exporter = new PrometheusExporter({ host: '127.0.0.1', port, preventServerStart: true });
    await exporter.startServer();
    const provider = new MeterProvider({ readers: [exporter] });
    cleanups.push(() => provider.shutdown());
    const meter = provider.getMeter('sluice');

    const client = await resilientClient(redis.port);
    const remote = createRedisLimiter({
      client,
      algorithm: gcra({ limit: 10, periodMs: HOUR }),
      batch: true,
      wrapClient: storeMetrics({ meter, name: 'api' }),
    });
    const leased = createLeasedLimiter({ remote, leaseSize: 5 });
    const api = instrument(withFailurePolicy(leased, { onWarning: false }), { meter, name: 'api', layers: [leased] });
    for (let i = 0; i < 12; i++) await api.limit('user:1');
    await expect(api.limit('')).rejects.toBeInstanceOf(InvalidKeyError);
    const deadClient = new Redis({ port: await freePort(), lazyConnect: true, enableOfflineQueue: false });
    deadClient.on('error', () => {});
    cleanups.push(() => deadClient.disconnect());
    const unreachable = createRedisLimiter({
      client: deadClient,
      algorithm: gcra({ limit: 1, periodMs: HOUR }),
      wrapClient: storeMetrics({ meter, name: 'dead' }),
    });
    await expect(unreachable.limit('k')).rejects.toBeInstanceOf(StoreUnavailableError);

    const response = await fetch(`http://127.0.0.1:${port}/metrics`);
    expect(response.status).toBe(200);
    const samples = parseExposition(await response.text());
    const value = (name: string, labels: Record<string, string> = {}) =>
      samples
        .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
        .reduce((total, s) => total + s.value, 0);
    const has = (name: string) => samples.some((s) => s.name === name);

    // Every documented metric, under its Prometheus name (dots to underscores; counters end in _total).
    for (const [id, name] of Object.entries(METRICS)) {
      const base = name.replaceAll('.', '_');
      const exposed = { counter: `${base}_total`, gauge: base, histogram: `${base}_count` }[
        KINDS[id as keyof typeof METRICS]
      ];
      expect(has(exposed), `${name} as ${exposed}`).toBe(true);
    }
    // 12 decisions on limit 10 with leases of 5: two leases (2 remote calls, 8 local hits), then
    // a refusal at full size and at the shortfall (2 calls), then a cached refusal.
    const api$ = { sluice_limit: 'api', sluice_algorithm: 'gcra' };
    expect(value('sluice_decisions_total', { ...api$, sluice_outcome: 'allowed' })).toBe(10);
    expect(value('sluice_decisions_total', { ...api$, sluice_outcome: 'denied' })).toBe(2);
    expect(value('sluice_units_total', { ...api$, sluice_admitted: 'true' })).toBe(10);
    expect(value('sluice_units_total', { ...api$, sluice_admitted: 'false' })).toBe(2);
    expect(value('sluice_near_limit_total', api$)).toBe(2); // remaining 1 and 0, under 0.2 × 10
    expect(value('sluice_decision_errors_total', { ...api$, error_type: 'ERR_SLUICE_INVALID_KEY' })).toBe(1);
    expect(value('sluice_degraded_transitions_total', api$)).toBe(0);
    expect(value('sluice_degraded', api$)).toBe(0);
    expect(value('sluice_lease_local_hits_total', api$)).toBe(8);
    expect(value('sluice_lease_remote_calls_total', api$)).toBe(4);
    expect(value('sluice_lease_cached_denials_total', api$)).toBe(1);
    expect(value('sluice_lease_units_leased_total', api$)).toBe(10);
    expect(value('sluice_lease_units_returned_total', api$)).toBe(0);
    expect(value('sluice_lease_units_expired_total', api$)).toBe(0);
    expect(value('sluice_lease_units_held', api$)).toBe(0);
    expect(value('sluice_policy_breaker_state', { ...api$, sluice_breaker_state: 'closed' })).toBe(1);
    expect(value('sluice_policy_breaker_state', { ...api$, sluice_breaker_state: 'open' })).toBe(0);
    expect(value('sluice_policy_breaker_opens_total', api$)).toBe(0);
    expect(value('sluice_policy_failures_total', api$)).toBe(0);
    // Batched: 4 script calls of one decision each, plus the first call's NOSCRIPT → EVAL.
    const batch$ = { sluice_limit: 'api', sluice_operation: 'batch' };
    expect(value('sluice_store_duration_count', batch$)).toBe(5);
    expect(value('sluice_store_batch_size_count', batch$)).toBe(4);
    expect(value('sluice_store_batch_size_sum', batch$)).toBe(4);
    const dead$ = { sluice_limit: 'dead', sluice_operation: 'decide', sluice_error_kind: 'connection' };
    expect(value('sluice_store_duration_count', dead$)).toBe(1);
    expect(value('sluice_store_errors_total', dead$)).toBe(1);
    expect(samples.some((s) => Object.values(s.labels).some((v) => v.includes('user:')))).toBe(false);
  });
});

const KINDS: Record<keyof typeof METRICS, 'counter' | 'gauge' | 'histogram'> = {
  decisions: 'counter',
  units: 'counter',
  nearLimit: 'counter',
  decisionErrors: 'counter',
  degraded: 'gauge',
  degradedTransitions: 'counter',
  storeDuration: 'histogram',
  storeErrors: 'counter',
  batchSize: 'histogram',
  leaseLocalHits: 'counter',
  leaseRemoteCalls: 'counter',
  leaseCachedDenials: 'counter',
  leaseUnitsLeased: 'counter',
  leaseUnitsReturned: 'counter',
  leaseUnitsExpired: 'counter',
  leaseUnitsHeld: 'gauge',
  policyBreakerState: 'gauge',
  policyBreakerOpens: 'counter',
  policyFailures: 'counter',
};

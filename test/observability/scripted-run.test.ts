import { describe, expect, it } from 'vitest';
import { gcra } from '../../src/algorithms/gcra.js';
import { createLeasedLimiter } from '../../src/lease/leased-limiter.js';
import { type DegradedTransition, instrument, METRICS, storeMetrics } from '../../src/observability/index.js';
import { withFailurePolicy } from '../../src/policy/index.js';
import { createRedisLimiter } from '../../src/stores/redis/redis-limiter.js';
import { resilientClient, sleep } from '../policy/support/clients.js';
import { perTest } from './support/per-test.js';
import { scriptCalls } from './support/script-calls.js';

/*
 * One scripted run on the real SDK: allowed, denied, leased and degraded decisions (redis-server
 * paused with SIGSTOP), then exact counter values and attributes, and one store-histogram sample
 * per round trip as redis-server itself counts them (INFO commandstats).
 */
const HOUR = 3_600_000;
const owned = perTest();

describe('a scripted run on the real OpenTelemetry SDK', () => {
  it('allowed, denied, leased and degraded decisions give exactly the expected metrics', async () => {
    const redis = await owned.redis();
    const admin = redis.connect();
    const client = await resilientClient(redis.port);
    const metrics = owned.meters();
    const { meter, collect, totalOf } = metrics;

    // Stack 1, 'api': Redis (limit 3 per hour) under a fail-open policy with a 100 ms deadline.
    const redisApi = createRedisLimiter({
      client,
      algorithm: gcra({ limit: 3, periodMs: HOUR }),
      prefix: 'api:',
      wrapClient: storeMetrics({ meter, name: 'api' }),
    });
    const policy = withFailurePolicy(redisApi, {
      failure: 'open',
      deadlineMs: 100,
      breaker: { failureThreshold: 10 },
      onWarning: false,
    });
    const transitions: DegradedTransition[] = [];
    const api = instrument(policy, { meter, name: 'api', onDegradedTransition: (e) => transitions.push(e) });

    // Stack 2, 'leased': leases of 5 from Redis (limit 10 per hour).
    const redisLeased = createRedisLimiter({
      client,
      algorithm: gcra({ limit: 10, periodMs: HOUR }),
      prefix: 'leased:',
      wrapClient: storeMetrics({ meter, name: 'leased' }),
    });
    const leased = instrument(createLeasedLimiter({ remote: redisLeased, leaseSize: 5 }), { meter, name: 'leased' });

    // 3 allowed, 1 denied.
    for (let i = 0; i < 3; i++) expect((await api.limit('user:1')).allowed).toBe(true);
    expect((await api.limit('user:1')).allowed).toBe(false);
    // 6 leased: a lease of 5 (1 remote call; the first request spends from it), 4 local hits,
    // then a second lease of 5 for the sixth.
    for (let i = 0; i < 6; i++) expect((await leased.limit('user:1')).allowed).toBe(true);

    // Paused: 3 decisions degrade on the deadline (fail open: admitted).
    redis.pause();
    try {
      for (let i = 0; i < 3; i++) {
        const decision = await api.limit('user:2');
        expect(decision).toMatchObject({ allowed: true, degraded: true, degradedReason: 'timeout', failure: 'open' });
      }
      const during = await collect();
      expect(totalOf(during, METRICS.degraded, { 'sluice.limit': 'api' })).toBe(1);
    } finally {
      redis.resume();
    }
    // The three late calls complete once the server runs again; wait for their replies.
    while (policy.stats().lateReplies < 3) await sleep(20);
    // Recovered: the next decision is an ordinary one (user:2 was spent by the late scripts).
    const after = await api.limit('user:2');
    expect(after.degraded).toBeUndefined();

    const points = await collect();
    const api$ = { 'sluice.limit': 'api', 'sluice.algorithm': 'gcra' };
    const leased$ = { 'sluice.limit': 'leased', 'sluice.algorithm': 'gcra' };
    const decisions = (match: Record<string, string>) => totalOf(points, METRICS.decisions, match);
    expect(decisions({ ...api$, 'sluice.outcome': 'allowed' })).toBe(3);
    expect(decisions({ ...api$, 'sluice.outcome': 'denied' })).toBe(2);
    expect(
      decisions({
        ...api$,
        'sluice.outcome': 'degraded',
        'sluice.degraded.reason': 'timeout',
        'sluice.failure': 'open',
      }),
    ).toBe(3);
    expect(decisions({ ...leased$, 'sluice.outcome': 'allowed' })).toBe(6);
    expect(decisions({ ...leased$, 'sluice.outcome': 'denied' })).toBe(0);
    expect(totalOf(points, METRICS.units, { ...api$, 'sluice.admitted': true })).toBe(6);
    expect(totalOf(points, METRICS.units, { ...api$, 'sluice.admitted': false })).toBe(2);

    // Leasing, from the leased limiter's stats() at collection.
    expect(totalOf(points, METRICS.leaseRemoteCalls, leased$)).toBe(2);
    expect(totalOf(points, METRICS.leaseLocalHits, leased$)).toBe(4);
    expect(totalOf(points, METRICS.leaseUnitsLeased, leased$)).toBe(10);
    expect(totalOf(points, METRICS.leaseUnitsHeld, leased$)).toBe(4);

    // Policy: three timeouts, breaker closed all along.
    expect(totalOf(points, METRICS.policyFailures, { ...api$, 'sluice.error.kind': 'timeout' })).toBe(3);
    expect(totalOf(points, METRICS.policyBreakerState, { ...api$, 'sluice.breaker.state': 'closed' })).toBe(1);
    expect(totalOf(points, METRICS.policyBreakerState, { ...api$, 'sluice.breaker.state': 'open' })).toBe(0);

    // One degraded spell: one transition each way, told once each, with its count.
    expect(totalOf(points, METRICS.degradedTransitions, { ...api$, 'sluice.transition': 'degraded' })).toBe(1);
    expect(totalOf(points, METRICS.degradedTransitions, { ...api$, 'sluice.transition': 'recovered' })).toBe(1);
    expect(totalOf(points, METRICS.degraded, api$)).toBe(0);
    expect(transitions.map(({ state, reason }) => ({ state, reason }))).toEqual([
      { state: 'degraded', reason: 'timeout' },
      { state: 'recovered', reason: 'timeout' },
    ]);
    const recovered = transitions[1] as Extract<DegradedTransition, { state: 'recovered' }>;
    expect(recovered.degradedDecisions).toBe(3);
    expect(recovered.durationMs).toBeGreaterThan(0);

    // One histogram sample per round trip the server executed (NOSCRIPT retries included).
    const samples = totalOf(points, METRICS.storeDuration);
    expect(samples).toBe(await scriptCalls(admin));
    expect(totalOf(points, METRICS.storeDuration, { 'sluice.limit': 'api', 'sluice.operation': 'decide' })).toBe(
      8 + 1, // 4 + 3 late + 1 decisions, and the first call's NOSCRIPT → EVAL
    );
    expect(totalOf(points, METRICS.storeErrors)).toBe(0);
    // No attribute carries a key.
    for (const point of points) expect(JSON.stringify(point.attributes)).not.toMatch(/user:/);
  });
});

import { describe, expect, it } from 'vitest';
import { gcra } from '../../src/algorithms/gcra.js';
import { instrument, METRICS, storeMetrics } from '../../src/observability/index.js';
import { withFailurePolicy } from '../../src/policy/index.js';
import { createRedisLimiter } from '../../src/stores/redis/redis-limiter.js';
import { manualClock } from '../../src/testing/index.js';
import { resilientClient, sleep } from '../policy/support/clients.js';
import { perTest } from './support/per-test.js';

/*
 * A real breaker over a redis-server paused with SIGSTOP, read through the real SDK: the
 * `sluice.policy.breaker.state` gauge through closed → open → half-open → open → half-open →
 * closed, and `sluice.policy.breaker.opens` counting each opening (a failed probe's too). The
 * breaker runs on a manual clock, so only the deadline waits in real time.
 */
const HOUR = 3_600_000;
const COOL_DOWN_MS = 1000;
const owned = perTest();

describe('the breaker on the real OpenTelemetry SDK', () => {
  it('the state gauge and the opens counter follow a real breaker open and closed again', async () => {
    const redis = await owned.redis();
    const clock = manualClock();
    const metrics = owned.meters();
    const { meter, collect, totalOf } = metrics;
    const policy = withFailurePolicy(
      createRedisLimiter({
        client: await resilientClient(redis.port),
        algorithm: gcra({ limit: 100, periodMs: HOUR }),
        wrapClient: storeMetrics({ meter, name: 'api' }),
      }),
      {
        failure: 'open',
        // Long enough that a collection always ends while a probe still waits on the paused server.
        deadlineMs: 500,
        breaker: { failureThreshold: 2, coolDownMs: COOL_DOWN_MS },
        clock: clock.now,
        onWarning: false,
      },
    );
    const api = instrument(policy, { meter, name: 'api' });
    const api$ = { 'sluice.limit': 'api', 'sluice.algorithm': 'gcra' };
    const read = async () => {
      const points = await collect();
      const state = (name: string) =>
        totalOf(points, METRICS.policyBreakerState, { ...api$, 'sluice.breaker.state': name });
      const failures = (kind: string) =>
        totalOf(points, METRICS.policyFailures, { ...api$, 'sluice.error.kind': kind });
      return {
        closed: state('closed'),
        open: state('open'),
        halfOpen: state('half-open'),
        opens: totalOf(points, METRICS.policyBreakerOpens, api$),
        timeouts: failures('timeout'),
        rejected: failures('breaker-open'),
      };
    };

    expect((await api.limit('k')).degraded).toBeUndefined();
    expect(await read()).toEqual({ closed: 1, open: 0, halfOpen: 0, opens: 0, timeouts: 0, rejected: 0 });

    redis.pause();
    try {
      // Two missed deadlines open it; the next call is answered without reaching the store.
      for (let i = 0; i < 2; i++) expect((await api.limit('k')).degradedReason).toBe('timeout');
      expect((await api.limit('k')).degradedReason).toBe('breaker-open');
      expect(await read()).toEqual({ closed: 0, open: 1, halfOpen: 0, opens: 1, timeouts: 2, rejected: 1 });

      // Cool-down over: the next call is the probe, half-open while it waits; it misses its
      // deadline and opens the breaker again (counted).
      // The breaker turns half-open on the first call after its cool-down, not by itself.
      clock.advance(COOL_DOWN_MS);
      expect(await read()).toEqual({ closed: 0, open: 1, halfOpen: 0, opens: 1, timeouts: 2, rejected: 1 });
      const probe = api.limit('k');
      expect(await read()).toEqual({ closed: 0, open: 0, halfOpen: 1, opens: 1, timeouts: 2, rejected: 1 });
      expect((await probe).degradedReason).toBe('timeout');
      expect(await read()).toEqual({ closed: 0, open: 1, halfOpen: 0, opens: 2, timeouts: 3, rejected: 1 });
    } finally {
      redis.resume();
    }
    // The three late calls complete once the server runs again; they change no state.
    while (policy.stats().lateReplies < 3) await sleep(20);
    expect(await read()).toEqual({ closed: 0, open: 1, halfOpen: 0, opens: 2, timeouts: 3, rejected: 1 });

    // The next probe succeeds and closes it.
    clock.advance(COOL_DOWN_MS);
    expect((await api.limit('k')).degraded).toBeUndefined();
    expect(await read()).toEqual({ closed: 1, open: 0, halfOpen: 0, opens: 2, timeouts: 3, rejected: 1 });
  });
});

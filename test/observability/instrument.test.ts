import { afterEach, describe, expect, it } from 'vitest';
import { gcra } from '../../src/algorithms/gcra.js';
import { slidingWindowLog } from '../../src/algorithms/sliding-window-log.js';
import { ConfigError, InvalidKeyError } from '../../src/errors.js';
import { createLeasedLimiter } from '../../src/lease/leased-limiter.js';
import type { Limiter } from '../../src/limiter.js';
import { instrument, METRICS } from '../../src/observability/index.js';
import { withFailurePolicy } from '../../src/policy/index.js';
import { createMemoryLimiter } from '../../src/stores/memory/memory-limiter.js';
import { createMeters } from './support/metrics.js';

const HOUR = 3_600_000;
const meters: ReturnType<typeof createMeters>[] = [];
const metersForTest = () => {
  const created = createMeters();
  meters.push(created);
  return created;
};
afterEach(async () => {
  await Promise.all(meters.splice(0).map((m) => m.shutdown()));
});

describe('instrument', () => {
  it('forwards every member, optional ones exactly when the wrapped limiter has them', () => {
    const { meter } = metersForTest();
    const refundable = createMemoryLimiter({ algorithm: gcra({ limit: 5, periodMs: HOUR }), maxKeys: 10 });
    const plain = createMemoryLimiter({ algorithm: slidingWindowLog({ limit: 5, windowMs: HOUR }), maxKeys: 10 });
    const leased = createLeasedLimiter({ remote: refundable, leaseSize: 2 });
    const policy = withFailurePolicy(leased);
    const limiters: Limiter[] = [refundable, plain, leased, policy];
    for (const limiter of limiters) {
      const instrumented = instrument(limiter, { meter });
      expect(Object.keys(instrumented).sort()).toEqual(Object.keys(limiter).sort());
      for (const member of ['refund', 'tryLimit', 'limitSync', 'stats', 'prune']) {
        expect(typeof Reflect.get(instrumented, member)).toBe(typeof Reflect.get(limiter, member));
      }
    }
    expect('refund' in instrument(plain, { meter })).toBe(false);
    expect('refund' in instrument(refundable, { meter })).toBe(true);
  });

  it('getters read the wrapped limiter live', () => {
    const { meter } = metersForTest();
    const limiter = createMemoryLimiter({ algorithm: gcra({ limit: 5, periodMs: HOUR }), maxKeys: 10 });
    const instrumented = instrument(limiter, { meter });
    instrumented.limitSync('a');
    instrumented.limitSync('b');
    expect(instrumented.size).toBe(2);
    expect(instrumented.bytes).toBe(limiter.bytes);
  });

  it('counts decisions, units and near-limit decisions exactly, across limit and limitSync', async () => {
    const { meter, collect, totalOf } = metersForTest();
    const limiter = instrument(createMemoryLimiter({ algorithm: gcra({ limit: 10, periodMs: HOUR }), maxKeys: 10 }), {
      meter,
      name: 'api',
      nearLimitRatio: 0.3,
    });
    // 10 units: costs 3, 3, 3 (remaining 7, 4, 1: the last two under 0.3 × 10 = 3 only for 1),
    // then cost 2 denied, cost 1 allowed (remaining 0, near), cost 1 denied.
    for (const cost of [3, 3, 3]) limiter.limitSync('k', { cost });
    expect((await limiter.limit('k', { cost: 2 })).allowed).toBe(false);
    expect((await limiter.limit('k', { cost: 1 })).allowed).toBe(true);
    expect(limiter.limitSync('k').allowed).toBe(false);
    await expect(limiter.limit('')).rejects.toBeInstanceOf(InvalidKeyError);

    const points = await collect();
    const base = { 'sluice.limit': 'api', 'sluice.algorithm': 'gcra' };
    expect(totalOf(points, METRICS.decisions, { ...base, 'sluice.outcome': 'allowed' })).toBe(4);
    expect(totalOf(points, METRICS.decisions, { ...base, 'sluice.outcome': 'denied' })).toBe(2);
    expect(totalOf(points, METRICS.units, { ...base, 'sluice.admitted': true })).toBe(10);
    expect(totalOf(points, METRICS.units, { ...base, 'sluice.admitted': false })).toBe(3);
    expect(totalOf(points, METRICS.nearLimit, base)).toBe(2);
    expect(totalOf(points, METRICS.decisionErrors, { ...base, 'error.type': 'ERR_SLUICE_INVALID_KEY' })).toBe(1);
    expect(points.find((p) => p.name === METRICS.decisions)?.unit).toBe('{decision}');
    for (const point of points) expect(Object.values(point.attributes)).not.toContain('k');
  });

  it('labelOf maps keys to a low-cardinality label, capped at 100 labels', async () => {
    const { meter, collect, totalOf } = metersForTest();
    const limiter = instrument(createMemoryLimiter({ algorithm: gcra({ limit: 10, periodMs: HOUR }), maxKeys: 1000 }), {
      meter,
      labelOf: (key) => key.split(':')[0] as string,
    });
    limiter.limitSync('pro:1');
    limiter.limitSync('pro:2');
    limiter.limitSync('free:1');
    for (let i = 0; i < 150; i++) limiter.limitSync(`k${i}:x`);
    const points = await collect();
    expect(totalOf(points, METRICS.decisions, { 'sluice.label': 'pro' })).toBe(2);
    expect(totalOf(points, METRICS.decisions, { 'sluice.label': 'free' })).toBe(1);
    // pro, free and k0..k97 fill the 100 labels; k98..k149 count as 'other'.
    expect(totalOf(points, METRICS.decisions, { 'sluice.label': 'other' })).toBe(150 - 98);
    const labels = new Set(points.filter((p) => p.name === METRICS.decisions).map((p) => p.attributes['sluice.label']));
    expect(labels.size).toBe(101);
  });

  it('rejects invalid options with ConfigError naming the option', () => {
    const { meter } = metersForTest();
    const limiter = createMemoryLimiter({ algorithm: gcra({ limit: 10, periodMs: HOUR }), maxKeys: 10 });
    expect(() => instrument(limiter, {} as never)).toThrow(/meter/);
    expect(() => instrument(limiter, { meter, nearLimitRatio: 2 })).toThrow(ConfigError);
    expect(() => instrument(limiter, { meter, name: '' })).toThrow(/name/);
    expect(() => instrument(limiter, { meter, labelOf: 'plan' as never })).toThrow(/labelOf/);
    expect(() => instrument(limiter, { meter, layers: [{}] as never })).toThrow(/layers/);
    expect(() => instrument({} as never, { meter })).toThrow(ConfigError);
  });
});

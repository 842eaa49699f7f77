import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { gcra } from '../../src/algorithms/gcra.js';
import { createHttpLimiter, type LimitRule, type RequestFacts } from '../../src/http/index.js';
import type { Limiter } from '../../src/limiter.js';
import { instrument, METRICS, storeMetrics } from '../../src/observability/index.js';
import { createRedisLimiter } from '../../src/stores/redis/index.js';
import { type RedisServer, startRedis } from '../support/redis-server.js';
import { createMeters } from './support/metrics.js';
import { scriptCalls } from './support/script-calls.js';

/*
 * The bug this pins: a hand-written metrics decorator dropped `refund`, so nested limits fell
 * from the refund strategy (parallel charges) to check-first (reads, then charges): more Redis
 * calls per request. Round trips are counted by redis-server itself (INFO commandstats).
 */
let redis: RedisServer;
let admin: Redis;
let prefix = 0;
const meters: ReturnType<typeof createMeters>[] = [];

beforeAll(async () => {
  redis = await startRedis();
  admin = redis.connect();
});
afterAll(() => redis?.stop());
afterEach(async () => {
  await Promise.all(meters.splice(0).map((m) => m.shutdown()));
});

const facts = (apiKey: string): RequestFacts<null> => ({
  request: null,
  method: 'GET',
  path: '/',
  header: (name) => (name === 'x-api-key' ? apiKey : undefined),
  remoteAddress: '192.0.2.1',
});

/** Two refundable GCRA limits on Redis (per IP 10, per API key 1), instrumented or not. */
function limits(instrumented: ReturnType<typeof createMeters> | undefined): LimitRule<null>[] {
  const client = redis.connect();
  const make = (name: string, limit: number): Limiter => {
    const meter = instrumented?.meter;
    const limiter = createRedisLimiter({
      client,
      algorithm: gcra({ limit, periodMs: 60_000 }),
      prefix: `obs${prefix++}:`,
      clock: () => 1_700_000_000_000,
      ...(meter && { wrapClient: storeMetrics({ meter, name }) }),
    });
    return meter ? instrument(limiter, { meter, name }) : limiter;
  };
  return [
    { name: 'per-ip', limiter: make('per-ip', 10) },
    { name: 'per-key', limiter: make('per-key', 1), key: (r) => r.header('x-api-key') },
  ];
}

/** EVALSHA + EVAL calls the server executed while `run` ran. */
async function scriptCallsOf(run: () => Promise<unknown>): Promise<number> {
  await admin.config('RESETSTAT');
  await run();
  return scriptCalls(admin);
}

/**
 * Script calls of one allowed then one denied request on a fresh API key, after a warm-up, as
 * the server counts them and, when given, as the store histogram's sample count moves.
 */
async function callsPerRequest(rules: LimitRule<null>[], samples: () => Promise<number> = async () => 0) {
  const http = createHttpLimiter({ limits: rules });
  await http.check(facts('warm-up'));
  await http.check(facts('warm-up')); // denied once: loads the refund script too
  const measure = async () => {
    const before = await samples();
    const calls = await scriptCallsOf(() => http.check(facts('k')));
    return { calls, samples: (await samples()) - before };
  };
  const allowed = await measure();
  const denied = await measure();
  return { allowed, denied };
}

describe('an instrumented nested HTTP stack keeps the refund strategy', () => {
  it('Redis calls per request are the same with and without instrumentation: 2 allowed, 4 denied', async () => {
    const plain = await callsPerRequest(limits(undefined));
    const metrics = createMeters();
    meters.push(metrics);
    const samples = async () => metrics.totalOf(await metrics.collect(), METRICS.storeDuration);
    const instrumented = await callsPerRequest(limits(metrics), samples);
    expect(plain.allowed.calls).toBe(2);
    expect(plain.denied.calls).toBe(4);
    expect(instrumented.allowed.calls).toBe(plain.allowed.calls);
    expect(instrumented.denied.calls).toBe(plain.denied.calls);
    // One histogram sample per round trip the server executed.
    expect(instrumented.allowed.samples).toBe(2);
    expect(instrumented.denied.samples).toBe(4);
    const points = await metrics.collect();
    expect(metrics.totalOf(points, METRICS.storeDuration, { 'sluice.operation': 'refund' })).toBe(2);
  });
});

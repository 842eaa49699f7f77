import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpLimiter, type LimitRule, type RequestFacts } from '../../src/http/index.js';
import { chargeAll } from '../../src/http/nested.js';
import { createLeasedLimiter, forwardOptional, gcra, type Limiter } from '../../src/index.js';
import { withFailurePolicy } from '../../src/policy/index.js';
import { createRedisLimiter } from '../../src/stores/redis/index.js';
import { manualClock } from '../../src/testing/index.js';
import { type RedisServer, startRedis } from '../support/redis-server.js';

// Decorators keep what they wrap: nested HTTP limits over decorated Redis limiters use the
// refund strategy (one script call per limit per allowed request), as over the bare store.
// Script calls are counted by redis-server itself (INFO commandstats).

let redis: RedisServer;
let admin: Redis;
let prefix = 0;

beforeAll(async () => {
  redis = await startRedis();
  admin = redis.connect();
});
afterAll(() => redis?.stop());

const facts = (apiKey: string): RequestFacts<null> => ({
  request: null,
  method: 'GET',
  path: '/',
  header: (name) => (name === 'x-api-key' ? apiKey : undefined),
  remoteAddress: '192.0.2.1',
});

const redisLimiter = (): Limiter =>
  createRedisLimiter({
    client: redis.connect(),
    algorithm: gcra({ limit: 1_000, periodMs: 60_000 }),
    prefix: `stack${prefix++}:`,
    clock: () => 1_700_000_000_000,
  });

const degraded: unknown[] = [];

/**
 * The README's stack: failure policy over leasing over Redis. A frozen lease clock (no unit
 * expires) and a deadline no fresh connection misses keep the counts exact.
 */
const documentedStack = (leaseSize: number): Limiter =>
  withFailurePolicy(
    createLeasedLimiter({ remote: redisLimiter(), leaseSize, returnIdleMs: 5_000, clock: manualClock().now }),
    { deadlineMs: 10_000, onDegraded: (event) => degraded.push(event) },
  );

/** A user's metrics decorator that forwards only the required members. */
const bareDecorator = (inner: Limiter): Limiter => ({
  algorithm: inner.algorithm,
  limit: (key, options) => inner.limit(key, options),
  peek: (key) => inner.peek(key),
  reset: (key) => inner.reset(key),
  close: () => inner.close(),
});

function nested(make: () => Limiter): LimitRule<null>[] {
  return [
    { name: 'per-ip', limiter: make() },
    { name: 'per-key', limiter: make(), key: (r) => r.header('x-api-key') },
  ];
}

/** EVALSHA + EVAL calls per allowed request, over `requests` allowed requests after a warm-up. */
async function callsPerAllowedRequest(rules: LimitRule<null>[], requests: number): Promise<number> {
  const http = createHttpLimiter({ limits: rules });
  expect((await http.check(facts('warm-up'))).action).toBe('continue'); // loads the script
  await admin.config('RESETSTAT');
  for (let i = 0; i < requests; i++) expect((await http.check(facts('k'))).action).toBe('continue');
  const stats = await admin.info('commandstats');
  const calls = (command: string) => Number(new RegExp(`cmdstat_${command}:calls=(\\d+)`).exec(stats)?.[1] ?? 0);
  expect(degraded).toEqual([]);
  return (calls('evalsha') + calls('eval')) / requests;
}

describe('nested limits over decorated limiters', () => {
  it('the documented stack (policy over leased over Redis) exposes refund, so nested limits charge with the refund strategy', async () => {
    const [ip, key] = [documentedStack(8), documentedStack(8)];
    expect(typeof ip.refund).toBe('function');
    const outcome = await chargeAll(
      [
        { name: 'per-ip', limiter: ip, key: 'ip', cost: 1 },
        { name: 'per-key', limiter: key, key: 'key', cost: 1 },
      ],
      () => {},
    );
    expect(outcome).toMatchObject({ allowed: true, strategy: 'refund' });
  });

  it('the documented stack at lease size 1: 2 script calls per allowed request (one per limit)', async () => {
    expect(
      await callsPerAllowedRequest(
        nested(() => documentedStack(1)),
        8,
      ),
    ).toBe(2);
  });

  it('the documented stack at lease size 8: 2 script calls per 8 allowed requests (one lease per limit)', async () => {
    expect(
      await callsPerAllowedRequest(
        nested(() => documentedStack(8)),
        8,
      ),
    ).toBe(2 / 8);
  });

  it("a user's decorator built with forwardOptional keeps refund: 2 script calls per allowed request, as the bare store", async () => {
    const keep = () => {
      const inner = redisLimiter();
      return forwardOptional(inner, bareDecorator(inner));
    };
    expect(typeof keep().refund).toBe('function');
    expect(await callsPerAllowedRequest(nested(redisLimiter), 8)).toBe(2);
    expect(await callsPerAllowedRequest(nested(keep), 8)).toBe(2);
  });

  it('a decorator that drops refund costs twice the calls: check-first reads every key, then charges (4)', async () => {
    expect(
      await callsPerAllowedRequest(
        nested(() => bareDecorator(redisLimiter())),
        8,
      ),
    ).toBe(4);
  });
});

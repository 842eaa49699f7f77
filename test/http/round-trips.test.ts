import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedWindow } from '../../src/algorithms/fixed-window.js';
import { gcra } from '../../src/algorithms/gcra.js';
import type { Algorithm } from '../../src/algorithms/types.js';
import { createHttpLimiter, type LimitRule, type RequestFacts } from '../../src/http/index.js';
import { createRedisLimiter } from '../../src/stores/redis/index.js';
import { type RedisServer, startRedis } from '../support/redis-server.js';

// Script calls per HTTP request, counted by redis-server itself (INFO commandstats), per nested strategy.
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

function limits(ipAlgorithm: Algorithm, keyAlgorithm: Algorithm): LimitRule<null>[] {
  const client = redis.connect();
  const make = (algorithm: Algorithm) =>
    createRedisLimiter({ client, algorithm, prefix: `rt${prefix++}:`, clock: () => 1_700_000_000_000 });
  return [
    { name: 'per-ip', limiter: make(ipAlgorithm) },
    { name: 'per-key', limiter: make(keyAlgorithm), key: (r) => r.header('x-api-key') },
  ];
}

/** EVALSHA + EVAL calls the server executed while `run` ran. */
async function scriptCalls(run: () => Promise<unknown>): Promise<number> {
  await admin.config('RESETSTAT');
  await run();
  const stats = await admin.info('commandstats');
  const calls = (command: string) => Number(new RegExp(`cmdstat_${command}:calls=(\\d+)`).exec(stats)?.[1] ?? 0);
  return calls('evalsha') + calls('eval');
}

describe('Redis script calls per request', () => {
  it('one limit: 1 call, allowed or denied', async () => {
    const http = createHttpLimiter({
      limits: limits(gcra({ limit: 1, periodMs: 60_000 }), gcra({ limit: 1, periodMs: 60_000 })).slice(0, 1),
    });
    await http.check(facts('warm-up')); // loads the script (NOSCRIPT → EVAL once)
    expect(await scriptCalls(() => http.check(facts('a')))).toBe(1);
    expect(await scriptCalls(() => http.check(facts('a')))).toBe(1);
  });

  it('two refundable limits (GCRA): 2 parallel calls when allowed; 2 + 1 refund + 1 re-read when denied', async () => {
    const http = createHttpLimiter({
      limits: limits(gcra({ limit: 10, periodMs: 60_000 }), gcra({ limit: 1, periodMs: 60_000 })),
    });
    await http.check(facts('warm-up'));
    await http.check(facts('warm-up')); // denied once: loads the refund script too
    expect(await scriptCalls(() => http.check(facts('k')))).toBe(2);
    expect(await scriptCalls(() => http.check(facts('k')))).toBe(4);
  });

  it('limits without refund (fixed window): 2 reads + 2 charges when allowed; 2 reads + 1 charge when the read predicts the denial', async () => {
    const window = (limit: number) => fixedWindow({ limit, windowMs: 60_000 });
    const http = createHttpLimiter({ limits: limits(window(10), window(1)) });
    await http.check(facts('warm-up'));
    expect(await scriptCalls(() => http.check(facts('k')))).toBe(4);
    expect(await scriptCalls(() => http.check(facts('k')))).toBe(3);
  });
});

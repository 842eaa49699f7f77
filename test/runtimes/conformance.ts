import { Redis } from 'ioredis';
import { type Algorithm, createLeasedLimiter, createMemoryLimiter, type Limiter, type MemoryLimiter } from 'sluice';
import { createRedisLimiter, fromIoredis } from 'sluice/redis';
import { runConformance, type TestApi } from 'sluice/testing';
import { holdingKeys } from './held-keys.js';

// A refund kept on a leased instance's local lease may report one unit less than the remote alone
// for under one emission interval (test/support/lease-exemptions.ts says why).
const leaseRefundTrails = {
  'reservation-settle': 'a refund kept on the local lease may report one unit less for under one emission interval',
};

/** The test registration a runtime entry hands over: `node:test`'s, which Bun and Deno both implement. */
export interface RuntimeTestApi extends TestApi {
  after(body: () => Promise<void>): unknown;
}

// The algorithms whose state one reply determines, as in test/lease/conformance.test.ts.
const leasedAlgorithms = ['gcra', 'token-bucket', 'fixed-window'] as const;

/**
 * The conformance suite, from the built package, for the memory store, the leased limiter
 * (leaseSize 1) over memory and over Redis, and the Redis store through ioredis against the
 * redis-server at `redisUrl`.
 */
export function registerConformance(test: RuntimeTestApi, redisUrl: string): void {
  const connections: Redis[] = [];
  const redis = (connection: number): Redis => {
    connections[connection] ??= connect(redisUrl);
    return connections[connection];
  };
  test.after(async () => {
    await Promise.all(connections.map((c) => c.quit()));
  });
  const redisLimiter = (algorithm: Algorithm, clock: () => number, connection: number): Limiter =>
    createRedisLimiter({ client: holdingKeys(fromIoredis(redis(connection))), algorithm, clock });

  runConformance({ name: 'memory store', test, create: sharedMemory() });
  const memoryRemote = sharedMemory();
  runConformance({
    name: 'leased limiter, leaseSize 1, over memory',
    test,
    algorithms: leasedAlgorithms,
    exempt: leaseRefundTrails,
    create: (algorithm, clock) =>
      createLeasedLimiter({ remote: memoryRemote(algorithm, clock), leaseSize: 1, clock: clock.now }),
  });
  runConformance({
    name: 'redis store (ioredis, client clock)',
    test,
    create: (algorithm, clock, connection) => redisLimiter(algorithm, clock.now, connection),
  });
  runConformance({
    name: 'leased limiter, leaseSize 1, over Redis (ioredis)',
    test,
    algorithms: leasedAlgorithms,
    exempt: leaseRefundTrails,
    create: (algorithm, clock, connection) =>
      createLeasedLimiter({ remote: redisLimiter(algorithm, clock.now, connection), leaseSize: 1, clock: clock.now }),
  });
}

/** One process has one memory: every "connection" of the suite shares one limiter per algorithm. */
function sharedMemory(): (algorithm: Algorithm, clock: { now: () => number }) => MemoryLimiter {
  const limiters = new WeakMap<Algorithm, MemoryLimiter>();
  return (algorithm, clock) => {
    let limiter = limiters.get(algorithm);
    if (!limiter) {
      limiter = createMemoryLimiter({ algorithm, clock: clock.now, pruneIntervalMs: 0 });
      limiters.set(algorithm, limiter);
    }
    return limiter;
  };
}

function connect(url: string): Redis {
  const client = new Redis(url, { maxRetriesPerRequest: 1 });
  client.on('error', () => {});
  return client;
}

import { describe, it } from 'vitest';
import { type Algorithm, createLeasedLimiter, createMemoryLimiter, type MemoryLimiter } from '../../src/index.js';
import { createRedisLimiter } from '../../src/stores/redis/index.js';
import { runConformance } from '../../src/testing/index.js';
import { held } from '../support/held-keys.js';
import { leaseRefundTrails } from '../support/lease-exemptions.js';
import { useRedisServer } from '../support/redis-server.js';
import { subscribersOf } from '../support/subscribers.js';

// Rule 6: with leaseSize 1 the leased limiter answers exactly as its remote would, so it is held
// to the whole suite. Each `connection` is a separate leased limiter (an instance of a fleet)
// over one shared remote, so the concurrency property races four instances on one key.
//
// Capability: the algorithms whose state one reply determines. A cached refusal (rule 3) answers
// later requests without asking, so it must know how the remote's `remaining` moves meanwhile:
// GCRA and token bucket regenerate one unit per T, a fixed window all at once. The sliding
// windows give units back as individual entries (or weight) leave the window, which no reply
// shows; there a cached refusal's `remaining` is a lower bound, and test/lease/leased-limiter.test.ts (rule 6)
// holds them to the same allowed/denied sequence instead.
const algorithms = ['gcra', 'token-bucket', 'fixed-window'] as const;

const memoryRemotes = new WeakMap<Algorithm, MemoryLimiter>();

const refundTrails = leaseRefundTrails;

runConformance({
  name: 'leased limiter, leaseSize 1, over memory',
  test: { describe, it },
  exempt: refundTrails,
  algorithms,
  capabilities: ['partial'],
  create(algorithm, clock) {
    let remote = memoryRemotes.get(algorithm);
    if (!remote) {
      remote = createMemoryLimiter({ algorithm, clock: clock.now, pruneIntervalMs: 0 });
      memoryRemotes.set(algorithm, remote);
    }
    return createLeasedLimiter({ remote, leaseSize: 1, clock: clock.now });
  },
});

const { redis } = useRedisServer({ connections: 4 });
const subscriberOf = subscribersOf(redis);

runConformance({
  name: 'leased limiter, leaseSize 1, over Redis (ioredis, client clock)',
  test: { describe, it },
  exempt: refundTrails,
  algorithms,
  capabilities: ['partial'],
  create: (algorithm, clock, connection) =>
    createLeasedLimiter({
      remote: createRedisLimiter({
        client: held(redis(connection)),
        subscriber: subscriberOf(connection),
        algorithm,
        clock: clock.now,
      }),
      leaseSize: 1,
      clock: clock.now,
    }),
});

// leaseSize 5, one instance per `connection` over one memory remote: every property of the suite
// holds per instance (and the concurrency property across four instances), except
// 'reference-model', which demands the remote alone's exact decision at every step. With units
// at hand an instance may report one unit less for under one emission interval (a held unit
// whose slot is less than T ahead is dropped before the remote counts it back), so it trails the
// remote alone, never leads it. What holds fleet-wide instead is tested in never-over-admit.test.ts.
const leasedRemotes = new WeakMap<Algorithm, MemoryLimiter>();
runConformance({
  name: 'leased limiter, leaseSize 5, over memory',
  test: { describe, it },
  exempt: {
    ...refundTrails,
    'reference-model':
      'an instance holding units may report one unit less than the remote alone for under one emission interval',
    'per-request-params':
      'as reference-model; and at a change of numbers the units held are given back (or dropped), so it trails the remote alone',
  },
  algorithms,
  create(algorithm, clock) {
    let remote = leasedRemotes.get(algorithm);
    if (!remote) {
      remote = createMemoryLimiter({ algorithm, clock: clock.now, pruneIntervalMs: 0 });
      leasedRemotes.set(algorithm, remote);
    }
    return createLeasedLimiter({ remote, leaseSize: 5, clock: clock.now });
  },
});

import type { Redis } from 'ioredis';
import { afterAll, describe, it } from 'vitest';
import { createRedisLimiter, fromIoredis } from '../../src/stores/redis/index.js';
import { runConformance } from '../../src/testing/index.js';
import { holdingKeys } from '../support/held-keys.js';
import { useRedisServer } from '../support/redis-server.js';

const { redis } = useRedisServer({ connections: 4 });
// One subscriber connection per client connection, shared by the limiters created on it.
const subscribers = new Map<number, Redis>();
const subscriberOf = (connection: number): Redis => {
  let subscriber = subscribers.get(connection);
  if (!subscriber) {
    subscriber = redis(connection).duplicate();
    subscriber.on('error', () => {});
    subscribers.set(connection, subscriber);
  }
  return subscriber;
};
afterAll(() => {
  for (const subscriber of subscribers.values()) subscriber.disconnect();
});

runConformance({
  name: 'redis store (ioredis, client clock)',
  test: { describe, it },
  capabilities: ['partial'],
  // The suite's clock is manual; keys are held so Redis's own expiry cannot race it (see held-keys.ts).
  create: (algorithm, clock, connection) =>
    createRedisLimiter({
      client: holdingKeys(fromIoredis(redis(connection))),
      subscriber: subscriberOf(connection),
      algorithm,
      clock: clock.now,
    }),
});

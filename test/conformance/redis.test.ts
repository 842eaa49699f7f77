import { describe, it } from 'vitest';
import { createRedisLimiter, fromIoredis } from '../../src/stores/redis/index.js';
import { runConformance } from '../../src/testing/index.js';
import { holdingKeys } from '../support/held-keys.js';
import { useRedisServer } from '../support/redis-server.js';
import { subscribersOf } from '../support/subscribers.js';

const { redis } = useRedisServer({ connections: 4 });
const subscriberOf = subscribersOf(redis);

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

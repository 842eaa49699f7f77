import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { createRedisLimiter, fromIoredis } from '../../src/redis.js';
import { runConformance } from '../../src/testing/index.js';
import { holdingKeys } from '../support/held-keys.js';
import { type RedisServer, startRedis } from '../support/redis-server.js';

let server: RedisServer;
let connections: Redis[];

beforeAll(async () => {
  server = await startRedis();
  connections = [0, 1, 2, 3].map(() => server.connect());
});
afterAll(() => server.stop());

runConformance({
  name: 'redis store (ioredis, client clock)',
  test: { describe, it },
  // The suite's clock is manual; keys are held so Redis's own expiry cannot race it (see held-keys.ts).
  create: (algorithm, clock, connection) =>
    createRedisLimiter({
      client: holdingKeys(fromIoredis(connections[connection] as Redis)),
      algorithm,
      clock: clock.now,
    }),
});

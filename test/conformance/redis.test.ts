import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { createRedisLimiter } from '../../src/redis.js';
import { runConformance } from '../../src/testing/index.js';
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
  create: (algorithm, clock, connection) =>
    createRedisLimiter({ client: connections[connection], algorithm, clock: clock.now }),
});

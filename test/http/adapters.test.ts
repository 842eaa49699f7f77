import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { gcra } from '../../src/algorithms/gcra.js';
import { createRedisLimiter } from '../../src/stores/redis/index.js';
import { freePort, type RedisServer, startRedis } from '../support/redis-server.js';
import { harnesses } from './support/harnesses.js';
import { type Env, scenarios } from './support/scenarios.js';

// One scenario table, every adapter: the adapter × scenario matrix of docs/http.md.
let redis: RedisServer;
const dead: Redis[] = [];
let deadPort: number;
const env: Env = {
  get redis() {
    return redis;
  },
  deadLimiter() {
    // Nothing listens on deadPort; without an offline queue every command fails at once.
    const client = new Redis({
      port: deadPort,
      host: '127.0.0.1',
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
    });
    client.on('error', () => {});
    dead.push(client);
    return createRedisLimiter({ client, algorithm: gcra({ limit: 5, periodMs: 60_000 }), clock: 'client' });
  },
};

beforeAll(async () => {
  redis = await startRedis();
  deadPort = await freePort();
});
afterAll(async () => {
  for (const client of dead) client.disconnect();
  await redis?.stop();
});

describe.each(harnesses)('$name', (harness) => {
  it.each(scenarios)('$name', (scenario) => scenario.run(harness, env));
});

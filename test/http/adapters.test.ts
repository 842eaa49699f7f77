import { afterAll, beforeAll, describe, it } from 'vitest';
import { freePort, type RedisServer, startRedis } from '../support/redis-server.js';
import { deadRedis } from './support/dead-redis.js';
import { harnesses } from './support/harnesses.js';
import { type Env, scenarios } from './support/scenarios.js';

// One scenario table, every adapter: the adapter × scenario matrix of docs/http.md.
let redis: RedisServer;
let dead: ReturnType<typeof deadRedis>;
const env: Env = {
  get redis() {
    return redis;
  },
  deadLimiter: () => dead.limiter(),
};

beforeAll(async () => {
  redis = await startRedis();
  dead = deadRedis(await freePort());
});
afterAll(async () => {
  await dead?.close();
  await redis?.stop();
});

describe.each(harnesses)('$name', (harness) => {
  it.each(scenarios)('$name', (scenario) => scenario.run(harness, env));
});

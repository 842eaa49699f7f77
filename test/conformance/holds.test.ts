import { describe, it } from 'vitest';
import { memoryHolds, redisHolds } from '../../src/concurrency/index.js';
import { runHoldConformance } from '../../src/testing/index.js';
import { useRedisServer } from '../support/redis-server.js';

// One process has one memory: every "connection" shares the same store.
const memory = memoryHolds();
runHoldConformance({ name: 'memory holds', test: { describe, it }, create: () => memory });

describe('on a real redis-server', () => {
  const redis = useRedisServer({ connections: 4 });
  runHoldConformance({
    name: 'Redis holds',
    test: { describe, it },
    create: (connection) => redisHolds({ client: redis.redis(connection) }),
  });
});

describe('on a real valkey-server', () => {
  const valkey = useRedisServer({ connections: 4, server: 'valkey' });
  runHoldConformance({
    name: 'Valkey holds',
    test: { describe, it },
    create: (connection) => redisHolds({ client: valkey.redis(connection) }),
  });
});

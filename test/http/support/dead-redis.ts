import { Redis } from 'ioredis';
import { gcra } from '../../../src/algorithms/gcra.js';
import type { Limiter } from '../../../src/limiter.js';
import { createRedisLimiter } from '../../../src/stores/redis/index.js';

/** Redis limiters on a port nothing listens on: every call rejects with StoreUnavailableError. */
export function deadRedis(port: number) {
  const clients: Redis[] = [];
  return {
    limiter(): Limiter {
      // Without an offline queue every command fails at once.
      const client = new Redis({
        port,
        host: '127.0.0.1',
        lazyConnect: true,
        enableOfflineQueue: false,
        maxRetriesPerRequest: 0,
      });
      client.on('error', () => {});
      clients.push(client);
      return createRedisLimiter({ client, algorithm: gcra({ limit: 5, periodMs: 60_000 }), clock: 'client' });
    },
    close() {
      for (const client of clients) client.disconnect();
    },
  };
}

import { afterEach } from 'vitest';
import { disconnectAll } from '../../policy/support/clients.js';
import { type RedisServer, startRedis } from '../../support/redis-server.js';
import { createMeters } from './metrics.js';

/**
 * Meters and redis-servers that live for one test: after each test the meters shut down, the
 * servers stop and every resilient client disconnects.
 */
export function perTest() {
  const servers: RedisServer[] = [];
  const meters: ReturnType<typeof createMeters>[] = [];
  afterEach(async () => {
    disconnectAll();
    await Promise.all(meters.splice(0).map((m) => m.shutdown()));
    await Promise.all(servers.splice(0).map((s) => s.stop()));
  });
  return {
    meters() {
      const created = createMeters();
      meters.push(created);
      return created;
    },
    async redis() {
      const server = await startRedis();
      servers.push(server);
      return server;
    },
  };
}

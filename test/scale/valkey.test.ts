import type { Redis } from 'ioredis';
import { Redis as Valkey } from 'iovalkey';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisLimiter } from '../../src/stores/redis/index.js';
import { profiles } from '../../src/testing/index.js';
import { type RedisServer, startRedis } from '../support/redis-server.js';
import { runRedisConformance } from './support.js';

// One valkey-server 8 (Debian bookworm-backports in CI), through each client Sluice adapts.
type NodeRedisClient = ReturnType<typeof createClient>;

let server: RedisServer;
let ioredis: Redis[];
let valkey: Valkey[];
let nodeRedis: NodeRedisClient[];

beforeAll(async () => {
  server = await startRedis([], { server: 'valkey' });
  ioredis = [0, 1, 2, 3].map(() => server.connect());
  valkey = [0, 1, 2, 3].map(() => {
    const client = new Valkey({ port: server.port, host: '127.0.0.1', maxRetriesPerRequest: 1 });
    client.on('error', () => {});
    return client;
  });
  nodeRedis = await Promise.all(
    [0, 1, 2, 3].map(async () => {
      const client = createClient({ url: server.url });
      client.on('error', () => {});
      await client.connect();
      return client;
    }),
  );
});

afterAll(async () => {
  await Promise.all(nodeRedis?.map((client) => client.close()) ?? []);
  for (const client of valkey ?? []) client.disconnect();
  await server?.stop();
});

describe('Valkey 8, one node', () => {
  it('is valkey-server 8, not a redis-server', async () => {
    const info = await ioredis[0]?.info('server');
    expect(info).toMatch(/^server_name:valkey\r?$/m);
    expect(info).toMatch(/^valkey_version:8\./m);
  });

  // The conformance targets run on the client clock; this is the default, TIME inside the script.
  for (const profile of profiles) {
    it(`${profile.name}: on the server clock (TIME in the script) admits exactly the limit`, async () => {
      const limiter = createRedisLimiter({
        client: valkey[0],
        algorithm: profile.build(3, 60_000),
        prefix: `server-clock:${profile.name}:`,
      });
      const decisions = [];
      for (let i = 0; i < 4; i++) decisions.push((await limiter.limit('k')).allowed);
      expect(decisions).toEqual([true, true, true, false]);
    });
  }
});

runRedisConformance([
  { name: 'ioredis on Valkey 8', prefix: 'ioredis', clients: () => ioredis },
  { name: 'ioredis on Valkey 8, batched', prefix: 'ioredis-batched', clients: () => ioredis, batch: true },
  { name: 'iovalkey on Valkey 8', prefix: 'iovalkey', clients: () => valkey },
  { name: 'iovalkey on Valkey 8, batched', prefix: 'iovalkey-batched', clients: () => valkey, batch: true },
  { name: 'node-redis on Valkey 8', prefix: 'node-redis', clients: () => nodeRedis },
]);

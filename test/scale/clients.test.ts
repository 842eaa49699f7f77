import { Redis as Valkey } from 'iovalkey';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/index.js';
import { createRedisLimiter, toScriptClient } from '../../src/stores/redis/index.js';
import { scripts } from '../../src/stores/redis/scripts/index.js';
import { profiles } from '../../src/testing/index.js';
import { type RedisServer, startRedis } from '../support/redis-server.js';
import { runRedisConformance } from './support.js';

type NodeRedisClient = ReturnType<typeof createClient>;

let server: RedisServer;
let noTime: RedisServer;
let nodeRedis: NodeRedisClient[];
/** A subscriber connection of its own per node-redis connection: subscribe mode takes one over. */
let nodeRedisSubscribers: NodeRedisClient[];
let valkey: Valkey[];

async function nodeRedisClient(url: string): Promise<NodeRedisClient> {
  const client = createClient({ url });
  client.on('error', () => {});
  await client.connect();
  return client;
}

beforeAll(async () => {
  server = await startRedis();
  // A managed-service stand-in: TIME is not callable, from clients or scripts.
  noTime = await startRedis(['--rename-command', 'TIME', '']);
  nodeRedis = await Promise.all([0, 1, 2, 3].map(() => nodeRedisClient(server.url)));
  nodeRedisSubscribers = await Promise.all([0, 1, 2, 3].map(() => nodeRedisClient(server.url)));
  valkey = [0, 1, 2, 3].map(() => {
    const client = new Valkey({ port: server.port, host: '127.0.0.1', maxRetriesPerRequest: 1 });
    client.on('error', () => {});
    return client;
  });
});

afterAll(async () => {
  await Promise.all([...(nodeRedis ?? []), ...(nodeRedisSubscribers ?? [])].map((client) => client.close()));
  for (const client of valkey ?? []) client.disconnect();
  await server?.stop();
  await noTime?.stop();
});

runRedisConformance([
  {
    name: 'node-redis createClient',
    prefix: 'node-redis',
    clients: () => nodeRedis,
    subscriber: (connection) => nodeRedisSubscribers[connection],
  },
  {
    name: 'node-redis createClient, batched',
    prefix: 'node-redis-batched',
    clients: () => nodeRedis,
    batch: true,
    subscriber: (connection) => nodeRedisSubscribers[connection],
  },
  { name: 'iovalkey Redis', prefix: 'iovalkey', clients: () => valkey },
]);

describe('client detection', () => {
  it('adapts ioredis, iovalkey and node-redis clients and passes a ScriptClient through', () => {
    const scriptClient = { evalsha: async () => [], eval: async () => [] };
    expect(toScriptClient(scriptClient)).toBe(scriptClient);
    expect(toScriptClient(server.connect())).not.toBe(undefined);
    expect(toScriptClient(valkey[0])).not.toBe(undefined);
    expect(toScriptClient(nodeRedis[0])).not.toBe(undefined);
    for (const bad of [null, undefined, 42, 'redis://x', {}, { evalsha: () => 1 }]) {
      expect(() => toScriptClient(bad)).toThrow(ConfigError);
    }
  });

  it('rejects invalid batch options at construction', () => {
    const base = { client: server.connect(), algorithm: profiles[0]?.build(5, 1000) as never };
    for (const batch of [
      'yes',
      1,
      { maxDecisions: 0 },
      { maxDecisions: 1.5 },
      { maxDecisions: 1001 },
      { bySlot: 'no' },
    ]) {
      expect(() => createRedisLimiter({ ...base, batch: batch as never }), JSON.stringify(batch)).toThrow(ConfigError);
    }
  });
});

describe('script portability', () => {
  it('no script asks for redis.replicate_commands() (gone in Redis 7; effects replication is the default)', () => {
    for (const [name, script] of Object.entries(scripts)) {
      expect(script?.source, name).not.toMatch(/replicate_commands/);
    }
  });

  for (const profile of profiles) {
    it(`${profile.name}: clock 'client' decides where scripts may not call TIME; 'server' reports the store unavailable`, async () => {
      const client = noTime.connect();
      const algorithm = profile.build(3, 60_000);
      const onClientClock = createRedisLimiter({
        client,
        algorithm,
        clock: 'client',
        prefix: `client-clock:${profile.name}:`,
      });
      const decisions = [];
      for (let i = 0; i < 4; i++) decisions.push((await onClientClock.limit('k')).allowed);
      expect(decisions).toEqual([true, true, true, false]);
      const batched = createRedisLimiter({
        client,
        algorithm,
        clock: 'client',
        prefix: `batched:${profile.name}:`,
        batch: true,
      });
      const concurrent = await Promise.all([0, 1, 2, 3].map(() => batched.limit('k')));
      expect(concurrent.map((d) => d.allowed)).toEqual([true, true, true, false]);
      const onServerClock = createRedisLimiter({ client, algorithm, prefix: `server-clock:${profile.name}:` });
      await expect(onServerClock.limit('k')).rejects.toMatchObject({ code: 'ERR_SLUICE_STORE_UNAVAILABLE' });
    });
  }
});

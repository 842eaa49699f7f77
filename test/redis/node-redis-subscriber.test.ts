import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gcra } from '../../src/algorithms/gcra.js';
import { ConfigError } from '../../src/errors.js';
import type { InvalidationChange } from '../../src/limiter.js';
import { fromNodeRedis } from '../../src/stores/redis/clients/node-redis.js';
import { createRedisLimiter } from '../../src/stores/redis/redis-limiter.js';
import { type RedisServer, startRedis } from '../support/redis-server.js';
import { hasFastProperties } from '../support/v8-shapes.js';

/*
 * A node-redis connection as a limiter's `subscriber`: it hears the other instances' changes,
 * each once, and through a killed pub/sub connection it turns not live, forgets every key, and
 * after node-redis subscribes again by itself, hears each change once (not once per subscription).
 */
type NodeRedisClient = ReturnType<typeof createClient>;
/** A Redis limiter has every admin operation. */
type Operated = Required<ReturnType<typeof createRedisLimiter>>;
let server: RedisServer;
const clients: NodeRedisClient[] = [];

async function connect(): Promise<NodeRedisClient> {
  const client = createClient({ url: `redis://127.0.0.1:${server.port}` });
  client.on('error', () => {});
  clients.push(client);
  await client.connect();
  return client;
}

beforeAll(async () => {
  server = await startRedis();
});
afterAll(async () => {
  for (const client of clients) client.destroy();
  await server?.stop();
});

async function until(condition: () => boolean): Promise<void> {
  for (let waitedMs = 0; !condition(); waitedMs += 5) {
    if (waitedMs > 5000) throw new Error('condition not met within 5 s');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('a node-redis subscriber', () => {
  it('hears every other instance’s change once, and through a reconnection', async () => {
    const algorithm = gcra({ limit: 10, periodMs: 60_000 });
    const a = createRedisLimiter({
      client: fromNodeRedis(await connect()),
      algorithm,
      prefix: 'nr:',
      subscriber: await connect(),
    }) as Operated;
    const b = createRedisLimiter({ client: fromNodeRedis(await connect()), algorithm, prefix: 'nr:' }) as Operated;
    const invalidations = a.invalidations;
    const heard: [string | undefined, InvalidationChange | undefined][] = [];
    invalidations.subscribe((key, change) => heard.push([key, change]));
    await until(() => invalidations.live);
    // A leased limiter reads live on each refusal: no getter in a literal (V8's dictionary mode).
    expect(hasFastProperties(invalidations)).toBe(true);
    expect(Object.keys(invalidations)).toContain('live');
    heard.length = 0; // the "any key" heard on subscribing

    await b.reset('k');
    await b.block('k', 1000);
    await until(() => heard.length >= 2);
    await a.unblock('k'); // its own: heard at once, its echo skipped
    await new Promise((resolve) => setTimeout(resolve, 50)); // room for a duplicate to arrive
    expect(heard).toEqual([
      ['k', 'reset'],
      ['k', 'block'],
      ['k', 'unblock'],
    ]);

    heard.length = 0;
    const admin = await connect();
    await admin.sendCommand(['CLIENT', 'KILL', 'TYPE', 'pubsub']);
    await until(() => heard.length >= 1);
    expect(heard[0]).toEqual([undefined, undefined]); // dropped: forget every key
    await until(() => invalidations.live);
    expect(heard).toEqual([
      [undefined, undefined],
      [undefined, undefined], // subscribed again: forget once more
    ]);
    heard.length = 0;
    await b.invalidate('k');
    await until(() => heard.length >= 1);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(heard).toEqual([['k', 'invalidate']]);
    await a.close();
  });

  it('a client without subscribe is a ConfigError naming both shapes', () => {
    const attempt = () =>
      createRedisLimiter({
        client: { evalsha: async () => null, eval: async () => null },
        algorithm: gcra({ limit: 1, periodMs: 1000 }),
        subscriber: {},
      });
    expect(attempt).toThrow(ConfigError);
    expect(attempt).toThrow(/node-redis/);
  });
});

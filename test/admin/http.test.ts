import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { storageKeyOf, withRateLimit } from '../../src/http/index.js';
import { createLeasedLimiter, gcra } from '../../src/index.js';
import { createRedisLimiter } from '../../src/stores/redis/index.js';
import { type RedisServer, startRedis } from '../support/redis-server.js';

// A block made on one instance answers 429 with its Retry-After on another, through real HTTP.
// storageKeyOf names the state the HTTP layer keeps for the default rule's key 'client:1'.

let server: RedisServer;
beforeAll(async () => {
  server = await startRedis();
});
afterAll(() => server.stop());

it('a blocked client gets 429 with the Retry-After of the block from every instance', async () => {
  const instance = () => {
    const client = server.connect();
    const subscriber = server.connect();
    const remote = createRedisLimiter({
      client,
      subscriber,
      algorithm: gcra({ limit: 100, periodMs: 60_000 }),
      prefix: 'http-admin:',
      onWarning: false,
    });
    return createLeasedLimiter({ remote, leaseSize: 10 });
  };
  const [admin, serving] = [instance(), instance()];
  const http = createServer(
    withRateLimit({ limits: [{ limiter: serving, key: () => 'client:1' }], trustProxy: 'loopback' }, (_req, res) =>
      res.end('ok'),
    ),
  );
  http.listen(0, '127.0.0.1');
  await once(http, 'listening');
  const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/`;
  try {
    expect((await fetch(url)).status).toBe(200);
    const heard = serving.stats().invalidations;
    await admin.block?.(await storageKeyOf('default', 'client:1'), 90_000);
    for (let waited = 0; serving.stats().invalidations === heard && waited < 5_000; waited += 5) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const blocked = await fetch(url);
    expect(blocked.status).toBe(429);
    const retryAfter = Number(blocked.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(85);
    expect(retryAfter).toBeLessThanOrEqual(90);
    await admin.unblock?.(await storageKeyOf('default', 'client:1'));
    for (let waited = 0; serving.stats().invalidations === heard + 1 && waited < 5_000; waited += 5) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    expect((await fetch(url)).status).toBe(200);
  } finally {
    http.close();
    await Promise.all([admin.close(), serving.close()]);
  }
});

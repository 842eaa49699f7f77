import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withRateLimit } from '../../src/http/node.js';
import type { HttpLimitOptions } from '../../src/http/options.js';
import { type AlgorithmParams, createMemoryLimiter, gcra, type Limiter } from '../../src/index.js';
import { createRedisLimiter } from '../../src/stores/redis/index.js';
import { freshPrefix } from '../algorithms/stores.js';
import { type RedisServer, startRedis } from '../support/redis-server.js';

const plans: Record<string, AlgorithmParams> = {
  free: { limit: 2, periodMs: 60_000 },
  pro: { limit: 5, periodMs: 60_000 },
};
// A plan lookup, as an app would do it: async, by the caller's API key.
const planOf = async (apiKey: string | undefined) => (apiKey?.startsWith('pro-') ? plans.pro : plans.free);

let redis: RedisServer;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(() => redis.stop());

async function serve(options: HttpLimitOptions<IncomingMessage>): Promise<{ url: string; server: Server }> {
  const server = createServer(withRateLimit(options, (_req, res) => res.end('ok')));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, server };
}

const apiKeyOf = (request: { header: (name: string) => string | undefined }) => request.header('x-api-key');

const stores: [string, () => Limiter][] = [
  ['memory', () => createMemoryLimiter({ algorithm: gcra(plans.free as { limit: number; periodMs: number }) })],
  [
    'redis',
    () =>
      createRedisLimiter({
        client: redis.connect(),
        algorithm: gcra({ limit: 2, periodMs: 60_000 }),
        prefix: freshPrefix('http'),
        onWarning: false,
      }),
  ],
];

describe.each(stores)('an HTTP limit that is a plan lookup, %s', (_store, build) => {
  it('each API key gets its plan, and RateLimit-Policy reports the numbers that decided', async () => {
    const { url, server } = await serve({
      limits: {
        name: 'plan',
        limiter: build(),
        key: (request) => apiKeyOf(request) ?? null,
        params: (request) => planOf(apiKeyOf(request)),
      },
    });
    try {
      const statuses = async (apiKey: string, n: number) => {
        const out: [number, string | null, string | null][] = [];
        for (let i = 0; i < n; i++) {
          const response = await fetch(url, { headers: { 'x-api-key': apiKey } });
          await response.text();
          out.push([response.status, response.headers.get('ratelimit-policy'), response.headers.get('ratelimit')]);
        }
        return out;
      };
      const free = await statuses('free-1', 3);
      expect(free.map(([status]) => status)).toEqual([200, 200, 429]);
      expect(free[0]?.[1]).toBe('"plan";q=2;w=60');
      const pro = await statuses('pro-1', 6);
      expect(pro.map(([status]) => status)).toEqual([200, 200, 200, 200, 200, 429]);
      expect(pro[0]?.[1]).toBe('"plan";q=5;w=60');
      expect(pro[0]?.[2]).toBe('"plan";r=4;t=12');
    } finally {
      server.close();
    }
  });
});

describe('HTTP params: configuration', () => {
  it('refuses fixed params the algorithm refuses, and a limiter without algorithmFor', async () => {
    const limiter = createMemoryLimiter({ algorithm: gcra({ limit: 2, periodMs: 1_000 }) });
    await expect(serve({ limits: { limiter, params: { windowMs: 5 } } })).rejects.toThrow(
      /params of limit "default": unknown parameter 'windowMs'/,
    );
    const { algorithmFor: _dropped, ...bare } = limiter;
    await expect(serve({ limits: { limiter: bare, params: plans.pro } })).rejects.toThrow(
      /need a limiter with algorithmFor/,
    );
  });
});

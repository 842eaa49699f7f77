/*
 * node:http with sluice/http: nested limits (per client IP, per API key), a report endpoint that
 * costs 5 units of the key's budget, and a login route that fails closed.
 *
 *   npm run build && node --experimental-strip-types examples/http-node.ts   (Node ≥ 22.6; or compile it)
 *   PORT=3000 REDIS_URL=redis://127.0.0.1:6379 TRUST_PROXY=loopback ...      shared Redis, behind a local proxy
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMemoryLimiter, gcra, type Limiter } from 'sluice';
import { withRateLimit } from 'sluice/http';

async function limiter(limit: number, name: string): Promise<Limiter> {
  const algorithm = gcra({ limit, periodMs: 60_000 });
  if (!process.env.REDIS_URL) return createMemoryLimiter({ algorithm });
  const [{ Redis }, { createRedisLimiter }] = await Promise.all([import('ioredis'), import('sluice/redis')]);
  return createRedisLimiter({ client: new Redis(process.env.REDIS_URL), algorithm, prefix: `example:${name}:` });
}

const handler = withRateLimit(
  {
    limits: [
      { name: 'per-ip', limiter: await limiter(60, 'per-ip') },
      { name: 'per-key', limiter: await limiter(10, 'per-key'), key: (request) => request.header('x-api-key') },
    ],
    routes: {
      'GET /report': { cost: { 'per-key': 5 } },
      'POST /login': { failure: 'closed', limits: [{ name: 'login', limiter: await limiter(5, 'login') }] },
    },
    trustProxy: process.env.TRUST_PROXY || false,
    failure: 'open',
  },
  (request, response) => {
    response.setHeader('Content-Type', 'text/plain');
    response.end(`hello from ${request.method} ${request.url}\n`);
  },
);

const server = createServer(handler).listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${(server.address() as AddressInfo).port}`);
});

/*
 * Express (4 or 5) with sluice/express: nested limits (per client IP, per API key), a report
 * endpoint that costs 5 units of the key's budget, and a login route that fails closed.
 *
 *   npm run build && node --experimental-strip-types examples/http-express.ts   (Node ≥ 22.6; or compile it)
 *   PORT=3000 REDIS_URL=redis://127.0.0.1:6379 TRUST_PROXY=loopback ...         shared Redis, behind a local proxy
 */
import type { AddressInfo } from 'node:net';
import express from 'express';
import { createMemoryLimiter, gcra, type Limiter } from 'sluice';
import { rateLimit } from 'sluice/express';

async function limiter(limit: number, name: string): Promise<Limiter> {
  const algorithm = gcra({ limit, periodMs: 60_000 });
  if (!process.env.REDIS_URL) return createMemoryLimiter({ algorithm });
  const [{ Redis }, { createRedisLimiter }] = await Promise.all([import('ioredis'), import('sluice/redis')]);
  return createRedisLimiter({ client: new Redis(process.env.REDIS_URL), algorithm, prefix: `example:${name}:` });
}

const app = express();
app.use(
  rateLimit({
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
  }),
);
app.all('/{*path}', (request, response) => {
  response.type('text/plain').send(`hello from ${request.method} ${request.path}\n`);
});

const server = app.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${(server.address() as AddressInfo).port}`);
});

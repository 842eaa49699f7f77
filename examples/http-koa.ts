/*
 * Koa 3 with sluice/koa: nested limits (per client IP, per API key), a report endpoint that
 * costs 5 units of the key's budget, and a login route that fails closed.
 *
 *   npm run build && node --experimental-strip-types examples/http-koa.ts   (Node ≥ 22.6; or compile it)
 *   PORT=3000 REDIS_URL=redis://127.0.0.1:6379 TRUST_PROXY=loopback ...     shared Redis, behind a local proxy
 */
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { createMemoryLimiter, gcra, type Limiter } from 'sluice';
import { rateLimit } from 'sluice/koa';

async function limiter(limit: number, name: string): Promise<Limiter> {
  const algorithm = gcra({ limit, periodMs: 60_000 });
  if (!process.env.REDIS_URL) return createMemoryLimiter({ algorithm });
  const [{ Redis }, { createRedisLimiter }] = await Promise.all([import('ioredis'), import('sluice/redis')]);
  return createRedisLimiter({ client: new Redis(process.env.REDIS_URL), algorithm, prefix: `example:${name}:` });
}

const app = new Koa();
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
app.use((ctx) => {
  ctx.type = 'text/plain';
  ctx.body = `hello from ${ctx.method} ${ctx.path}\n`;
});

const server = app.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${(server.address() as AddressInfo).port}`);
});

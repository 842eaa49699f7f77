/*
 * Hono 4 with sluice/hono on Node (@hono/node-server). The middleware reads the web-standard
 * Request, so it runs on any runtime Hono does; only `clientAddress` changes (getConnInfo from
 * hono/bun, hono/deno or hono/cloudflare-workers). Nested limits (per client IP, per API key),
 * a report that costs 5 units of the key's budget, and a login route that fails closed.
 *
 *   npm run build && node --experimental-strip-types examples/http-hono.ts   (Node ≥ 22.6; or compile it)
 *   PORT=3000 REDIS_URL=redis://127.0.0.1:6379 TRUST_PROXY=loopback ...      shared Redis, behind a local proxy
 */
import { serve } from '@hono/node-server';
import { getConnInfo } from '@hono/node-server/conninfo';
import { Hono } from 'hono';
import { createMemoryLimiter, gcra, type Limiter } from 'sluice';
import { rateLimit } from 'sluice/hono';

async function limiter(limit: number, name: string): Promise<Limiter> {
  const algorithm = gcra({ limit, periodMs: 60_000 });
  if (!process.env.REDIS_URL) return createMemoryLimiter({ algorithm });
  const [{ Redis }, { createRedisLimiter }] = await Promise.all([import('ioredis'), import('sluice/redis')]);
  return createRedisLimiter({ client: new Redis(process.env.REDIS_URL), algorithm, prefix: `example:${name}:` });
}

const app = new Hono();
app.use(
  rateLimit({
    clientAddress: (c) => getConnInfo(c).remote.address,
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
app.all('*', (c) => c.text(`hello from ${c.req.method} ${c.req.path}\n`));

serve({ fetch: app.fetch, port: Number(process.env.PORT ?? 3000), hostname: '127.0.0.1' }, (info) => {
  console.log(`listening on http://127.0.0.1:${info.port}`);
});

/*
 * Fastify 5 with sluice/fastify: nested limits (per client IP, per API key); per-route policy in
 * each route's config: a report that costs 5 units of the key's budget, a login route that
 * fails closed with its own limit, and an exempt health check.
 *
 *   npm run build && node --experimental-strip-types examples/http-fastify.ts   (Node ≥ 22.6; or compile it)
 *   PORT=3000 REDIS_URL=redis://127.0.0.1:6379 TRUST_PROXY=loopback ...         shared Redis, behind a local proxy
 */
import Fastify from 'fastify';
import { createMemoryLimiter, gcra, type Limiter } from 'sluice';
import { rateLimit } from 'sluice/fastify';

async function limiter(limit: number, name: string): Promise<Limiter> {
  const algorithm = gcra({ limit, periodMs: 60_000 });
  if (!process.env.REDIS_URL) return createMemoryLimiter({ algorithm });
  const [{ Redis }, { createRedisLimiter }] = await Promise.all([import('ioredis'), import('sluice/redis')]);
  return createRedisLimiter({ client: new Redis(process.env.REDIS_URL), algorithm, prefix: `example:${name}:` });
}

const app = Fastify();
await app.register(rateLimit, {
  limits: [
    { name: 'per-ip', limiter: await limiter(60, 'per-ip') },
    { name: 'per-key', limiter: await limiter(10, 'per-key'), key: (request) => request.header('x-api-key') },
  ],
  trustProxy: process.env.TRUST_PROXY || false,
  failure: 'open',
});
const login = { name: 'login', limiter: await limiter(5, 'login') };
app.get('/', async () => 'hello\n');
app.get('/report', { config: { rateLimit: { cost: { 'per-key': 5 } } } }, async () => 'report\n');
app.post('/login', { config: { rateLimit: { failure: 'closed', limits: [login] } } }, async () => 'welcome\n');
app.get('/health', { config: { rateLimit: false } }, async () => 'ok\n');

const address = await app.listen({ port: Number(process.env.PORT ?? 3000), host: '127.0.0.1' });
console.log(`listening on ${address}`);

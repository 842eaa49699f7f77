/*
 * One server process of the http bench: HTTP_FRAMEWORK (fastify | express) with HTTP_LIMITER
 * (none | sluice | peer) at HTTP_LIMIT requests per hour, on a free loopback port sent to the
 * parent over IPC. On 'mark' it replies with its CPU time (process.cpuUsage, µs) and the
 * requests it has seen, so the parent can take CPU µs per request over a timed run.
 */
import { envOf } from './environment.mjs';

const framework = envOf('HTTP_FRAMEWORK');
const variant = envOf('HTTP_LIMITER');
const limit = Number(envOf('HTTP_LIMIT'));
const HOUR_MS = 3_600_000;

async function sluiceLimiter() {
  const { createMemoryLimiter, gcra } = await import('sluice');
  return createMemoryLimiter({ algorithm: gcra({ limit, periodMs: HOUR_MS }) });
}

async function fastifyServer() {
  const { default: Fastify } = await import('fastify');
  const app = Fastify({ logger: false });
  if (variant === 'sluice') {
    const { rateLimit } = await import('sluice/fastify');
    await app.register(rateLimit, { limiter: await sluiceLimiter() });
  } else if (variant === 'peer') {
    const { default: peer } = await import('@fastify/rate-limit');
    await app.register(peer, { max: limit, timeWindow: HOUR_MS });
  }
  app.get('/', async () => 'ok');
  await app.listen({ host: '127.0.0.1', port: 0 });
  return app.server;
}

async function expressServer() {
  const { default: express } = await import('express');
  const app = express();
  if (variant === 'sluice') {
    const { rateLimit } = await import('sluice/express');
    app.use(rateLimit({ limiter: await sluiceLimiter() }));
  } else if (variant === 'peer') {
    const { rateLimit } = await import('express-rate-limit');
    app.use(rateLimit({ limit, windowMs: HOUR_MS, standardHeaders: 'draft-7', legacyHeaders: false }));
  }
  app.get('/', (_req, res) => {
    res.send('ok');
  });
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return server;
}

const server = framework === 'fastify' ? await fastifyServer() : await expressServer();
let requests = 0;
server.on('request', () => {
  requests++;
});
process.on('message', (message) => {
  if (message === 'mark') process.send?.({ cpu: process.cpuUsage(), requests });
});
process.send?.({ port: /** @type {import('node:net').AddressInfo} */ (server.address()).port });

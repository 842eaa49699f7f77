/*
 * A minimal node:http server guarded by Sluice: 10 requests per minute per client address.
 *
 *   PORT=3000 node minimal-server.js                               one process: memory store
 *   REDIS_URL=redis://127.0.0.1:6379 PORT=3000 node minimal-server.js   a fleet: shared Redis GCRA
 *
 * With REDIS_URL set, every process that shares the Redis shares the limit (this needs the
 * optional peer dependency ioredis); without it, each process limits on its own.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMemoryLimiter, gcra, type Limiter } from 'sluice';

const algorithm = gcra({ limit: 10, periodMs: 60_000 });

async function createLimiter(): Promise<Limiter> {
  const url = process.env.REDIS_URL;
  if (!url) return createMemoryLimiter({ algorithm });
  const [{ Redis }, { createRedisLimiter }] = await Promise.all([import('ioredis'), import('sluice/redis')]);
  return createRedisLimiter({ client: new Redis(url), algorithm });
}

const limiter = await createLimiter();

const server = createServer(async (request, response) => {
  const decision = await limiter.limit(request.socket.remoteAddress ?? 'unknown').catch(() => undefined);
  if (decision === undefined) {
    // The store could not decide (Redis down): this server chooses to fail open.
    response.end('hello (unlimited: the rate limiter is unavailable)\n');
    return;
  }
  response.setHeader('RateLimit-Limit', decision.limit);
  response.setHeader('RateLimit-Remaining', decision.remaining);
  if (!decision.allowed) {
    if (Number.isFinite(decision.retryAfterMs)) {
      response.setHeader('Retry-After', Math.ceil(decision.retryAfterMs / 1000));
    }
    response.writeHead(429).end('too many requests\n');
    return;
  }
  response.end('hello\n');
});

server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${(server.address() as AddressInfo).port}`);
});

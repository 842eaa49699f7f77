import Fastify, { type FastifyRequest } from 'fastify';
import { describe, expect, it } from 'vitest';
import { gcra } from '../../src/algorithms/gcra.js';
import { rateLimit } from '../../src/http/fastify/index.js';
import { createMemoryLimiter } from '../../src/stores/memory/memory-limiter.js';
import { send } from './support/client.js';

const limiterOf = (limit: number) =>
  createMemoryLimiter({ algorithm: gcra({ limit, periodMs: 60_000 }), clock: () => 1_000_000, pruneIntervalMs: 0 });

describe('Fastify: the route options a request is limited under', () => {
  // request.routeOptions builds a new object on every read (Fastify 5); the adapter reads it once.
  it('are read once per request, with route policies still applied', async () => {
    const app = Fastify();
    let reads = 0;
    app.addHook('onRequest', (request, _reply, done) => {
      const getter = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(request), 'routeOptions')?.get;
      Object.defineProperty(request, 'routeOptions', {
        get(this: FastifyRequest) {
          reads++;
          return getter?.call(this);
        },
      });
      done();
    });
    await app.register(rateLimit, { limiter: limiterOf(100) });
    app.get('/', async () => 'ok');
    app.get('/report', { config: { rateLimit: { cost: 60 } } }, async () => 'queued');
    app.get('/health', { config: { rateLimit: false } }, async () => 'up');
    const url = await app.listen({ host: '127.0.0.1', port: 0 });
    try {
      const statuses: number[] = [];
      for (const path of ['/', '/', '/report', '/health', '/report'])
        statuses.push((await send(`${url}${path}`)).status);
      expect(statuses).toEqual([200, 200, 200, 200, 429]);
      expect(reads).toBe(5);
    } finally {
      await app.close();
    }
  });
});

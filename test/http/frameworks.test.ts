import type { AddressInfo } from 'node:net';
import express from 'express';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { gcra } from '../../src/algorithms/gcra.js';
import { ConfigError } from '../../src/errors.js';
import { rateLimit as expressRateLimit } from '../../src/http/express/index.js';
import { rateLimit as fastifyRateLimit } from '../../src/http/fastify/index.js';
import { createMemoryLimiter } from '../../src/stores/memory/memory-limiter.js';
import { send } from './support/client.js';

const limiterOf = (limit: number) =>
  createMemoryLimiter({ algorithm: gcra({ limit, periodMs: 60_000 }), clock: () => 1_000_000, pruneIntervalMs: 0 });

describe('what only some frameworks express', () => {
  it('Fastify: per-route policy in the route config (cost, exemption) and route patterns as routeId', async () => {
    const limiter = limiterOf(15);
    const app = Fastify();
    await app.register(fastifyRateLimit, { limiter, routes: { 'GET /users/:id': { cost: 2 } } });
    app.get('/report', { config: { rateLimit: { cost: 10 } } }, async () => 'ok');
    app.get('/health', { config: { rateLimit: false } }, async () => 'ok');
    app.get('/users/:id', async () => 'ok');
    await app.listen({ port: 0, host: '127.0.0.1' });
    const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    try {
      expect((await send(`${url}/report`)).headers.get('ratelimit')).toBe('"default";r=5;t=40');
      const health = await send(`${url}/health`);
      expect(health.status).toBe(200);
      expect(health.headers.get('ratelimit')).toBeNull();
      expect((await send(`${url}/users/1`)).headers.get('ratelimit')).toBe('"default";r=3;t=48');
      expect((await send(`${url}/users/2`)).headers.get('ratelimit')).toBe('"default";r=1;t=56');
    } finally {
      await app.close();
    }
  });

  it('Fastify: an invalid route config fails at startup with ConfigError', async () => {
    const app = Fastify();
    await app.register(fastifyRateLimit, { limiter: limiterOf(5) });
    let thrown: unknown;
    try {
      app.get('/bad', { config: { rateLimit: { cost: -1 } } }, async () => 'ok');
      await app.ready();
    } catch (error) {
      thrown = error;
    } finally {
      await app.close();
    }
    expect(thrown).toBeInstanceOf(ConfigError);
  });

  it('Express: route-level middleware sees the route pattern as routeId', async () => {
    const limiter = limiterOf(15);
    const app = express();
    app.get('/users/:id', expressRateLimit({ limiter, routes: { 'GET /users/:id': { cost: 5 } } }), (_req, res) => {
      res.send('ok');
    });
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      expect((await send(`${url}/users/1`)).headers.get('ratelimit')).toBe('"default";r=10;t=20');
      expect((await send(`${url}/users/2?x=1`)).headers.get('ratelimit')).toBe('"default";r=5;t=40');
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

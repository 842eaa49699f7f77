import type { IncomingMessage } from 'node:http';
import express from 'express';
import type { FastifyRequest } from 'fastify';
import { type Context, Hono } from 'hono';
import Koa from 'koa';
import { describe, expectTypeOf, it } from 'vitest';
import { gcra } from '../../src/algorithms/gcra.js';
import { rateLimit as expressRateLimit } from '../../src/http/express/index.js';
import { rateLimit as fastifyRateLimit } from '../../src/http/fastify/index.js';
import { rateLimit as honoRateLimit } from '../../src/http/hono/index.js';
import { type LimitRule, nodeRateLimit } from '../../src/http/index.js';
import { rateLimit as koaRateLimit } from '../../src/http/koa/index.js';
import { createMemoryLimiter } from '../../src/stores/memory/memory-limiter.js';

// Compiled by `tsc --noEmit` (npm run check): key functions typed against each framework's own
// request type, without casts. The runtime part only checks that the middlewares build.
const limiter = createMemoryLimiter({ algorithm: gcra({ limit: 5, periodMs: 60_000 }) });

interface AuthedRequest extends express.Request {
  user?: { id: string };
}

describe('key functions see the framework request type', () => {
  it('Express: rateLimit<express.Request> reads body and user; a LimitRule<express.Request> fits', () => {
    const login: LimitRule<express.Request> = {
      name: 'login',
      limiter,
      key: (r) => (typeof r.request.body?.username === 'string' ? r.request.body.username : undefined),
    };
    const app = express();
    app.post('/login', express.json(), expressRateLimit<express.Request>({ limits: [login] }), (_req, res) => {
      res.send('ok');
    });
    app.use(
      expressRateLimit<AuthedRequest>({
        limits: { name: 'per-user', limiter, key: (r) => r.request.user?.id ?? null },
      }),
    );
    expectTypeOf(login.key).parameter(0).toHaveProperty('request').toEqualTypeOf<express.Request>();
  });

  it('Koa: rateLimit<Koa.Context> sees ctx.state and ctx.request', () => {
    const app = new Koa();
    app.use(
      koaRateLimit<Koa.Context>({
        limits: { limiter, key: (r) => (r.request.state.user as { id: string } | undefined)?.id },
      }),
    );
    expectTypeOf<Parameters<typeof koaRateLimit<Koa.Context>>[0]['limits']>().not.toBeUndefined();
  });

  it("Hono: key functions see the app's Context with its variables", () => {
    type AppEnv = { Variables: { user: { id: string } } };
    const app = new Hono<AppEnv>();
    app.use(
      honoRateLimit<AppEnv>({
        limits: {
          limiter,
          key: (r) => {
            expectTypeOf(r.request.get('user')).toEqualTypeOf<{ id: string }>();
            return r.request.get('user').id;
          },
        },
        clientAddress: () => '127.0.0.1',
      }),
    );
    expectTypeOf(honoRateLimit).parameter(0).toHaveProperty('clientAddress').parameter(0).toExtend<Context>();
  });

  it('Fastify and node:http: the request type is the framework one', () => {
    expectTypeOf(fastifyRateLimit).parameter(1).toHaveProperty('hook');
    const check = nodeRateLimit<IncomingMessage & { body?: { username?: string } }>({
      limits: { limiter, key: (r) => r.request.body?.username },
    });
    expectTypeOf(check).parameter(0).toHaveProperty('body');
    expectTypeOf<FastifyRequest>().toHaveProperty('body');
  });
});

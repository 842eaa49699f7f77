import { once } from 'node:events';
import { createServer, type Server, type ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { json } from 'node:stream/consumers';
import { serve } from '@hono/node-server';
import { getConnInfo } from '@hono/node-server/conninfo';
import express from 'express';
import Fastify from 'fastify';
import { type Context, Hono } from 'hono';
import Koa from 'koa';
import { rateLimit as expressRateLimit } from '../../../src/http/express/index.js';
import { type FastifyHook, rateLimit as fastifyRateLimit } from '../../../src/http/fastify/index.js';
import { rateLimit as honoRateLimit } from '../../../src/http/hono/index.js';
import { type HttpLimitOptions, nodeRateLimit, withRateLimit } from '../../../src/http/index.js';
import { rateLimit as koaRateLimit } from '../../../src/http/koa/index.js';

// express@4 is installed under the alias `express4` (no types of its own; the API used here is shared).
const express4 = createRequire(import.meta.url)('express4') as typeof express;

/** A running test server: every route answers 200 `ok` and counts its handler runs. */
export interface TestServer {
  /** Base URL on the address the test connects to. */
  readonly url: string;
  readonly port: number;
  /** Handler runs by path: a denied request never increments it. */
  readonly hits: Map<string, number>;
  close(): Promise<void>;
}

export interface StartOptions {
  /** Listen address; default 127.0.0.1. */
  host?: string;
  /**
   * Limits of POST /login only, mounted the framework's way: a second middleware on the route
   * (Express, Hono; a second check in front of the handler for node:http and Koa), the route's
   * `config.rateLimit.limits` for Fastify.
   */
  login?: HttpLimitOptions<unknown>['limits'];
}

/** Options a scenario gives every harness; `hook` is read by Fastify only (the others see the body anyway). */
export type HarnessOptions = HttpLimitOptions<unknown> & { hook?: FastifyHook };

/**
 * One adapter under test: builds the same app (GET /hello, POST /login, GET /report, GET /quota)
 * on its framework. JSON request bodies are parsed before the limiter runs, as each framework
 * does it (Express `express.json()`, Fastify's parser in `preValidation`, Hono `c.req.json()`,
 * a body middleware for Koa and node:http).
 */
export interface Harness {
  readonly name: string;
  start(options: HarnessOptions, start?: StartOptions): Promise<TestServer>;
  /** The parsed JSON body of the framework's request object, as a key function reads it. */
  body(request: unknown): Promise<unknown>;
}

type WithBody = { body?: unknown };

const isJson = (contentType: string | undefined) => contentType?.startsWith('application/json') === true;

/**
 * What a handler does, from the `x-outcome` request header: a status code (`401`), `throw`
 * (the framework answers 500) or `hang` (start a 200 response and never finish it; Hono, which
 * cannot stream a half response from here, waits for the client to hang up). Default 200.
 */
type Outcome = { kind: 'status'; status: number } | { kind: 'throw' } | { kind: 'hang' };

function outcomeOf(header: string | string[] | undefined): Outcome {
  if (header === 'throw') throw new Error('handler failed (x-outcome: throw)');
  if (header === 'hang') return { kind: 'hang' };
  return { kind: 'status', status: header === undefined ? 200 : Number(header) };
}

/** Starts a 200 response that never ends. */
function hang(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/plain' });
  res.write('partial');
}

export const ROUTES = [
  ['GET', '/hello'],
  ['POST', '/login'],
  ['GET', '/report'],
  ['GET', '/quota'],
] as const;

function counter() {
  const hits = new Map<string, number>();
  return { hits, hit: (path: string) => hits.set(path, (hits.get(path) ?? 0) + 1) };
}

function urlOf(host: string, port: number): string {
  if (host === '::' || host === '0.0.0.0') return `http://127.0.0.1:${port}`;
  return host.includes(':') ? `http://[${host}]:${port}` : `http://${host}:${port}`;
}

async function listenNode(server: Server, host: string) {
  server.listen(0, host);
  await once(server, 'listening');
  return served(server, host);
}

/** Port, URL and a close that drops open connections, for a listening node:http server. */
function served(server: Server, host: string) {
  const { port } = server.address() as AddressInfo;
  return {
    port,
    url: urlOf(host, port),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const nodeHarness: Harness = {
  name: 'node:http',
  async start(options, { host = '127.0.0.1', login } = {}) {
    const { hits, hit } = counter();
    const loginCheck = login ? nodeRateLimit({ limits: login }) : undefined;
    const listener = withRateLimit(options as HttpLimitOptions<unknown>, async (req, res) => {
      const path = (req.url ?? '/').split('?')[0] as string;
      if (loginCheck && path === '/login' && !(await loginCheck(req, res))) return;
      hit(path);
      const outcome = outcomeOf(req.headers['x-outcome']);
      if (outcome.kind === 'hang') return hang(res);
      if (outcome.kind === 'status') res.statusCode = outcome.status;
      res.end('ok');
    });
    const server = createServer(async (req, res) => {
      if (isJson(req.headers['content-type'])) (req as WithBody).body = await json(req);
      listener(req, res);
    });
    return { hits, ...(await listenNode(server, host)) };
  },
  body: async (request) => (request as WithBody).body,
};

function expressHarness(name: string, factory: typeof express): Harness {
  return {
    name,
    async start(options, { host = '127.0.0.1', login } = {}) {
      const { hits, hit } = counter();
      const app = factory();
      app.use(factory.json());
      app.use(expressRateLimit(options));
      if (login) app.post('/login', expressRateLimit({ limits: login }));
      for (const [method, path] of ROUTES) {
        app[method === 'GET' ? 'get' : 'post'](path, (req, res) => {
          hit(path);
          const outcome = outcomeOf(req.headers['x-outcome']);
          if (outcome.kind === 'hang') return hang(res);
          if (outcome.kind === 'status') res.status(outcome.status);
          res.send('ok');
        });
      }
      return { hits, ...(await listenNode(createServer(app), host)) };
    },
    body: async (request) => (request as WithBody).body,
  };
}

const fastifyHarness: Harness = {
  name: 'fastify 5',
  async start(options, { host = '127.0.0.1', login } = {}) {
    const { hits, hit } = counter();
    const app = Fastify();
    await app.register(fastifyRateLimit, options as HttpLimitOptions<unknown>);
    for (const [method, path] of ROUTES) {
      app.route({
        method,
        url: path,
        ...(login && path === '/login' ? { config: { rateLimit: { limits: [login].flat() } } } : {}),
        handler: async (request, reply) => {
          hit(path);
          const outcome = outcomeOf(request.headers['x-outcome']);
          if (outcome.kind === 'hang') {
            reply.hijack();
            return hang(reply.raw);
          }
          if (outcome.kind === 'status') reply.code(outcome.status);
          return 'ok';
        },
      });
    }
    await app.listen({ port: 0, host });
    const { port } = app.server.address() as AddressInfo;
    return { hits, port, url: urlOf(host, port), close: () => app.close() };
  },
  body: async (request) => (request as WithBody).body,
};

const honoHarness: Harness = {
  name: 'hono 4',
  async start(options, { host = '127.0.0.1', login } = {}) {
    const { hits, hit } = counter();
    const app = new Hono();
    const clientAddress = (c: Context) => getConnInfo(c).remote.address;
    app.use(honoRateLimit({ ...options, clientAddress }));
    if (login) app.post('/login', honoRateLimit({ limits: login, clientAddress }));
    for (const [method, path] of ROUTES) {
      app.on(method, path, async (c) => {
        hit(path);
        const outcome = outcomeOf(c.req.header('x-outcome'));
        if (outcome.kind === 'hang') {
          const { signal } = c.req.raw;
          await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
        }
        return c.text('ok', outcome.kind === 'status' ? (outcome.status as 200) : 200);
      });
    }
    const server = serve({ fetch: app.fetch, port: 0, hostname: host }) as Server;
    if (!server.listening) await once(server, 'listening');
    return { hits, ...served(server, host) };
  },
  body: (c) => (c as { req: { json(): Promise<unknown> } }).req.json(),
};

const koaHarness: Harness = {
  name: 'koa 3',
  async start(options, { host = '127.0.0.1', login } = {}) {
    const { hits, hit } = counter();
    const app = new Koa();
    app.use(async (ctx, next) => {
      if (isJson(ctx.get('content-type'))) (ctx.request as WithBody).body = await json(ctx.req);
      await next();
    });
    app.use(koaRateLimit(options));
    if (login) {
      const loginLimit = koaRateLimit({ limits: login });
      app.use((ctx, next) => (ctx.method === 'POST' && ctx.path === '/login' ? loginLimit(ctx, next) : next()));
    }
    app.use((ctx) => {
      if (ROUTES.some(([method, path]) => method === ctx.method && path === ctx.path)) {
        hit(ctx.path);
        const outcome = outcomeOf(ctx.get('x-outcome') || undefined);
        if (outcome.kind === 'hang') {
          ctx.respond = false;
          return hang(ctx.res);
        }
        if (outcome.kind === 'status') ctx.status = outcome.status;
        ctx.body = 'ok';
      }
    });
    return { hits, ...(await listenNode(createServer(app.callback()), host)) };
  },
  body: async (ctx) => ((ctx as { request: WithBody }).request as WithBody).body,
};

/** Every adapter, Express twice (5 and 4). */
export const harnesses: readonly Harness[] = [
  nodeHarness,
  expressHarness('express 5', express),
  expressHarness('express 4', express4),
  fastifyHarness,
  honoHarness,
  koaHarness,
];

import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { getConnInfo } from '@hono/node-server/conninfo';
import express from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';
import Koa from 'koa';
import { rateLimit as expressRateLimit } from '../../../src/http/express/index.js';
import { rateLimit as fastifyRateLimit } from '../../../src/http/fastify/index.js';
import { rateLimit as honoRateLimit } from '../../../src/http/hono/index.js';
import { type HttpLimitOptions, withRateLimit } from '../../../src/http/index.js';
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
}

/** One adapter under test: builds the same app (GET /hello, POST /login, GET /report, GET /quota) on its framework. */
export interface Harness {
  readonly name: string;
  start(options: HttpLimitOptions<unknown>, start?: StartOptions): Promise<TestServer>;
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
  async start(options, { host = '127.0.0.1' } = {}) {
    const { hits, hit } = counter();
    const listener = withRateLimit(options as HttpLimitOptions<unknown>, (req, res) => {
      hit((req.url ?? '/').split('?')[0] as string);
      res.end('ok');
    });
    return { hits, ...(await listenNode(createServer(listener), host)) };
  },
};

function expressHarness(name: string, factory: typeof express): Harness {
  return {
    name,
    async start(options, { host = '127.0.0.1' } = {}) {
      const { hits, hit } = counter();
      const app = factory();
      app.use(expressRateLimit(options));
      for (const [method, path] of ROUTES) {
        app[method === 'GET' ? 'get' : 'post'](path, (_req, res) => {
          hit(path);
          res.send('ok');
        });
      }
      return { hits, ...(await listenNode(createServer(app), host)) };
    },
  };
}

const fastifyHarness: Harness = {
  name: 'fastify 5',
  async start(options, { host = '127.0.0.1' } = {}) {
    const { hits, hit } = counter();
    const app = Fastify();
    await app.register(fastifyRateLimit, options as HttpLimitOptions<unknown>);
    for (const [method, path] of ROUTES) {
      app.route({
        method,
        url: path,
        handler: async () => {
          hit(path);
          return 'ok';
        },
      });
    }
    await app.listen({ port: 0, host });
    const { port } = app.server.address() as AddressInfo;
    return { hits, port, url: urlOf(host, port), close: () => app.close() };
  },
};

const honoHarness: Harness = {
  name: 'hono 4',
  async start(options, { host = '127.0.0.1' } = {}) {
    const { hits, hit } = counter();
    const app = new Hono();
    app.use(
      honoRateLimit({
        ...options,
        clientAddress: (c) => getConnInfo(c).remote.address,
      }),
    );
    for (const [method, path] of ROUTES) {
      app.on(method, path, (c) => {
        hit(path);
        return c.text('ok');
      });
    }
    const server = serve({ fetch: app.fetch, port: 0, hostname: host }) as Server;
    if (!server.listening) await once(server, 'listening');
    return { hits, ...served(server, host) };
  },
};

const koaHarness: Harness = {
  name: 'koa 3',
  async start(options, { host = '127.0.0.1' } = {}) {
    const { hits, hit } = counter();
    const app = new Koa();
    app.use(koaRateLimit(options));
    app.use((ctx) => {
      if (ROUTES.some(([method, path]) => method === ctx.method && path === ctx.path)) {
        hit(ctx.path);
        ctx.body = 'ok';
      }
    });
    return { hits, ...(await listenNode(createServer(app.callback()), host)) };
  },
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

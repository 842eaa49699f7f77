import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { getConnInfo } from '@hono/node-server/conninfo';
import Router from '@koa/router';
import express from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';
import Koa from 'koa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gcra } from '../../src/algorithms/gcra.js';
import { rateLimit as expressRateLimit } from '../../src/http/express/index.js';
import { rateLimit as fastifyRateLimit } from '../../src/http/fastify/index.js';
import { rateLimit as honoRateLimit } from '../../src/http/hono/index.js';
import { type HttpLimitOptions, type SluiceWarning, withRateLimit } from '../../src/http/index.js';
import { rateLimit as koaRateLimit } from '../../src/http/koa/index.js';
import { canonicalPath } from '../../src/http/routes.js';
import { createMemoryLimiter } from '../../src/stores/memory/memory-limiter.js';
import { freePort } from '../support/redis-server.js';
import { sendRaw } from './support/client.js';
import { deadRedis } from './support/dead-redis.js';

// Issue 12, item 1: a route's policy holds for every spelling a framework routes to its handler.
const express4 = createRequire(import.meta.url)('express4') as typeof express;

const limiterOf = (limit: number) =>
  createMemoryLimiter({ algorithm: gcra({ limit, periodMs: 60_000 }), clock: () => 1_000_000, pruneIntervalMs: 0 });

/** Every spelling tried; `/login` itself comes last, so a bypass shows as more than 2 handler runs. */
const LOGIN_SPELLINGS = ['/LOGIN', '/Login', '/login/', '//login', '/%6Cogin', '/login;x', '/login?x=1', '/login'];

interface App {
  port: number;
  /** Handler runs by route. */
  runs: Map<string, number>;
  close(): Promise<void>;
}

type Build = (options: HttpLimitOptions<unknown>) => Promise<App>;

function counter() {
  const runs = new Map<string, number>();
  return { runs, run: (route: string) => runs.set(route, (runs.get(route) ?? 0) + 1) };
}

async function listen(server: Server, runs: Map<string, number>): Promise<App> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    port: (server.address() as AddressInfo).port,
    runs,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function expressApp(factory: typeof express, settings: Record<string, boolean> = {}): Build {
  return (options) => {
    const { runs, run } = counter();
    const app = factory();
    for (const [name, value] of Object.entries(settings)) app.set(name, value);
    app.use(expressRateLimit(options));
    app.post('/login', (_req, res) => {
      run('login');
      res.send('ok');
    });
    app.get('/report', (_req, res) => {
      run('report');
      res.send('ok');
    });
    return listen(createServer(app), runs);
  };
}

const koaApp: Build = (options) => {
  const { runs, run } = counter();
  const app = new Koa();
  const router = new Router();
  router.post('/login', (ctx) => {
    run('login');
    ctx.body = 'ok';
  });
  router.get('/report', (ctx) => {
    run('report');
    ctx.body = 'ok';
  });
  app.use(koaRateLimit(options));
  app.use(router.routes());
  return listen(createServer(app.callback()), runs);
};

function fastifyApp(routerOptions: Record<string, boolean> = {}): Build {
  return async (options) => {
    const { runs, run } = counter();
    const app = Fastify({ routerOptions });
    await app.register(fastifyRateLimit, options);
    app.post('/login', async () => {
      run('login');
      return 'ok';
    });
    app.get('/report', async () => {
      run('report');
      return 'ok';
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    return { port: (app.server.address() as AddressInfo).port, runs, close: () => app.close() };
  };
}

function honoApp(strict = true): Build {
  return async (options) => {
    const { runs, run } = counter();
    const app = new Hono({ strict });
    app.use(honoRateLimit({ ...options, clientAddress: (c) => getConnInfo(c).remote.address }));
    app.post('/login', (c) => {
      run('login');
      return c.text('ok');
    });
    app.get('/report', (c) => {
      run('report');
      return c.text('ok');
    });
    const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }) as Server;
    if (!server.listening) await once(server, 'listening');
    return { port: (server.address() as AddressInfo).port, runs, close: () => listenedClose(server) };
  };
}

function listenedClose(server: Server) {
  return new Promise<void>((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });
}

/** A node:http app that routes by the documented rule, the most lenient router Sluice supports. */
const nodeApp: Build = (options) => {
  const { runs, run } = counter();
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    const path = canonicalPath(req.url ?? '/', { caseSensitive: false, strict: false });
    if (req.method === 'POST' && path === '/login') run('login');
    else if (req.method === 'GET' && path === '/report') run('report');
    else res.statusCode = 404;
    res.end();
  };
  return listen(createServer(withRateLimit(options as HttpLimitOptions<IncomingMessage>, handler)), runs);
};

const APPS: [string, Build][] = [
  ['express 5', expressApp(express)],
  [
    'express 5, case sensitive + strict',
    expressApp(express, { 'case sensitive routing': true, 'strict routing': true }),
  ],
  ['express 4', expressApp(express4)],
  [
    'express 4, case sensitive + strict',
    expressApp(express4, { 'case sensitive routing': true, 'strict routing': true }),
  ],
  ['koa 3 + @koa/router', koaApp],
  ['fastify 5', fastifyApp()],
  [
    'fastify 5, lenient router',
    fastifyApp({ caseSensitive: false, ignoreTrailingSlash: true, ignoreDuplicateSlashes: true }),
  ],
  ['hono 4', honoApp()],
  ['hono 4, strict: false', honoApp(false)],
  ['node:http', nodeApp],
];

const request = (port: number, method: string, path: string) =>
  sendRaw(port, `${method} ${path} HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`);

let dead: ReturnType<typeof deadRedis>;
beforeAll(async () => {
  dead = deadRedis(await freePort());
});
afterAll(() => dead?.close());

describe.each(APPS)('routes policies cannot be bypassed by spelling: %s', (_name, build) => {
  it('login limit 2/min: handler runs across every spelling equal the admissions, at most 2', async () => {
    const login = limiterOf(2);
    const app = await build({
      limiter: limiterOf(100),
      routes: { 'POST /login': { limits: [{ name: 'login', limiter: login }] } },
      onWarning: false,
    });
    try {
      const statuses: number[] = [];
      for (const path of LOGIN_SPELLINGS) statuses.push(await request(app.port, 'POST', path));
      const runs = app.runs.get('login') ?? 0;
      expect(runs, `statuses ${statuses.join(' ')}`).toBeLessThanOrEqual(2);
      expect(statuses.filter((status) => status === 200).length).toBe(runs);
    } finally {
      await app.close();
    }
  });

  it('an expensive /report (cost 10) is charged 10 whatever the spelling', async () => {
    const limiter = limiterOf(100);
    const app = await build({ limiter, routes: { 'GET /report': { cost: 10 } }, onWarning: false });
    try {
      for (const path of ['/Report', '/REPORT/', '/report', '//report;v=1', '/%72eport']) {
        const before = (await limiter.peek('default:ip:127.0.0.1')).remaining;
        const runsBefore = app.runs.get('report') ?? 0;
        const status = await request(app.port, 'GET', path);
        const spent = before - (await limiter.peek('default:ip:127.0.0.1')).remaining;
        const ran = (app.runs.get('report') ?? 0) - runsBefore;
        if (ran > 0) expect(spent, `${path} → ${status}`).toBe(10);
      }
      expect(app.runs.get('report')).toBeGreaterThan(0);
    } finally {
      await app.close();
    }
  });

  it("failure 'closed' on POST /login holds for every spelling while the rest fails open", async () => {
    const app = await build({
      limiter: dead.limiter(),
      failure: 'open',
      routes: { 'POST /login': { failure: 'closed' } },
      onWarning: false,
    });
    try {
      for (const path of LOGIN_SPELLINGS) await request(app.port, 'POST', path);
      expect(app.runs.get('login') ?? 0).toBe(0);
      expect(await request(app.port, 'GET', '/report')).toBe(200);
    } finally {
      await app.close();
    }
  });
});

describe('routes matching is exact where the router is strict', () => {
  it.each([
    ['express 5', express],
    ['express 4', express4],
  ] as const)(
    '%s with case sensitive + strict routing: /LOGIN and /login/ are 404, not charged',
    async (_name, factory) => {
      const login = limiterOf(2);
      const app = await expressApp(factory, { 'case sensitive routing': true, 'strict routing': true })({
        limiter: limiterOf(100),
        routes: { 'POST /login': { limits: [{ name: 'login', limiter: login }] } },
        onWarning: false,
      });
      try {
        expect(await request(app.port, 'POST', '/LOGIN')).toBe(404);
        expect(await request(app.port, 'POST', '/login/')).toBe(404);
        expect((await login.peek('login:ip:127.0.0.1')).remaining).toBe(2);
      } finally {
        await app.close();
      }
    },
  );
});

describe('routes entries bind to the route the framework matched', () => {
  it('hono 4: an app-level routes entry with a pattern applies to the matched handler', async () => {
    const limiter = limiterOf(100);
    const { runs, run } = counter();
    const app = new Hono();
    app.use(
      honoRateLimit({
        limiter,
        routes: { 'GET /users/:id': { cost: 5 } },
        clientAddress: (c) => getConnInfo(c).remote.address,
      }),
    );
    app.get('/users/:id', (c) => {
      run('user');
      return c.text('ok');
    });
    app.get('*', (c) => c.text('fallback', 404));
    const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }) as Server;
    if (!server.listening) await once(server, 'listening');
    try {
      expect(await request((server.address() as AddressInfo).port, 'GET', '/users/7')).toBe(200);
      expect(runs.get('user')).toBe(1);
      expect((await limiter.peek('default:ip:127.0.0.1')).remaining).toBe(95);
    } finally {
      await listenedClose(server);
    }
  });
});

describe('koa 3: route-level middleware on @koa/router sees the matched route', () => {
  it('router.get(path, rateLimit, handler) applies a GET /users/:id entry to /users/7', async () => {
    const limiter = limiterOf(100);
    const { runs, run } = counter();
    const app = new Koa();
    const router = new Router();
    const limit = koaRateLimit({ limiter, routes: { 'GET /users/:id': { cost: 5 } }, onWarning: false });
    router.get('/users/:id', limit, (ctx) => {
      run('user');
      ctx.body = 'ok';
    });
    app.use(router.routes());
    const served = await listen(createServer(app.callback()), runs);
    try {
      expect(await request(served.port, 'GET', '/users/7')).toBe(200);
      expect(runs.get('user')).toBe(1);
      expect((await limiter.peek('default:ip:127.0.0.1')).remaining).toBe(95);
    } finally {
      await served.close();
    }
  });
});

describe('canonicalPath and the routes table', () => {
  const loose = { caseSensitive: false, strict: false };
  it.each([
    ['/LOGIN', '/login'],
    ['/login/', '/login'],
    ['//login//', '/login'],
    ['/%6Cogin', '/login'],
    ['/%2Flogin', '/%2flogin'],
    ['/login;jsessionid=1', '/login'],
    ['/api;v=1/login', '/api/login'],
    ['/login?x=1#y', '/login'],
    ['/x/../login', '/login'],
    ['/./login/.', '/login'],
    ['/../login', '/login'],
    ['/', '/'],
  ])('%s → %s', (path, canonical) => {
    expect(canonicalPath(path, loose)).toBe(canonical);
  });

  it('keeps case and the trailing slash when asked', () => {
    expect(canonicalPath('/Login/', { caseSensitive: true, strict: true })).toBe('/Login/');
  });

  it('warns once at construction about entries that can never match', () => {
    const warnings: SluiceWarning[] = [];
    const options = {
      limiter: limiterOf(1),
      onWarning: (warning: SluiceWarning) => warnings.push(warning),
      routes: { 'post /login': {}, 'GET report': {}, 'GET /q?x=1': {}, 'GET /a': {}, 'GET /A/': {}, 'GET /ok': {} },
    };
    expressRateLimit(options);
    expect(warnings.map((w) => w.code)).toEqual(['SLUICE_HTTP_ROUTE_UNREACHABLE']);
    for (const spec of ['post /login', 'GET report', 'GET /q?x=1', 'GET /A/']) {
      expect(warnings[0]?.message).toContain(JSON.stringify(spec));
    }
    expect(warnings[0]?.message).not.toContain('"GET /ok"');
  });

  it('fastify 5: warns when ready about entries that match no registered route', async () => {
    const warnings: SluiceWarning[] = [];
    const app = Fastify();
    await app.register(fastifyRateLimit, {
      limiter: limiterOf(1),
      onWarning: (warning: SluiceWarning) => warnings.push(warning),
      routes: { 'POST /Login/': {}, 'POST /logn': {}, '/report': {}, 'GET /users/:id': {} },
    });
    app.post('/login', async () => 'ok');
    app.get('/report', async () => 'ok');
    app.get('/users/:id', async () => 'ok');
    await app.ready();
    await app.close();
    expect(warnings.map((w) => w.code)).toEqual(['SLUICE_HTTP_ROUTE_UNREACHABLE']);
    expect(warnings[0]?.message).toContain('"POST /logn"');
    for (const spec of ['POST /Login/', '/report', 'GET /users/:id']) {
      expect(warnings[0]?.message).not.toContain(JSON.stringify(spec));
    }
  });
});

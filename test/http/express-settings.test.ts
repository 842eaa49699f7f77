import { once } from 'node:events';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { describe, expect, it } from 'vitest';
import { gcra } from '../../src/algorithms/gcra.js';
import { rateLimit } from '../../src/http/express/index.js';
import type { HttpLimitOptions } from '../../src/http/index.js';
import { createMemoryLimiter } from '../../src/stores/memory/memory-limiter.js';
import { send } from './support/client.js';

const express4 = createRequire(import.meta.url)('express4') as typeof express;

const limiterOf = (limit: number) =>
  createMemoryLimiter({ algorithm: gcra({ limit, periodMs: 60_000 }), clock: () => 1_000_000, pruneIntervalMs: 0 });

const ROUTING = ['case sensitive routing', 'strict routing'];

/** An app limited by `options`, counting reads of its routing settings (Express reads others per request). */
async function countingApp(factory: typeof express, options: HttpLimitOptions<express.Request>) {
  const app = factory();
  app.set('case sensitive routing', true);
  app.use(rateLimit(options));
  app.post('/Login', (_req, res) => {
    res.send('ok');
  });
  const reads: string[] = [];
  const get = app.get;
  app.get = function (this: express.Express, ...args: unknown[]) {
    if (args.length === 1 && ROUTING.includes(String(args[0]))) reads.push(String(args[0]));
    return (get as (...args: unknown[]) => unknown).apply(this, args);
  } as typeof app.get;
  const server = createServer(app).listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, reads, close: () => new Promise((resolve) => server.close(resolve)) };
}

describe.each([
  ['express 5', express],
  ['express 4', express4],
])('%s: the app settings behind routes matching', (_name, factory) => {
  it('are read once per app, not per request, and still decide which entry matches', async () => {
    const login = limiterOf(2);
    const app = await countingApp(factory, {
      limiter: limiterOf(100),
      routes: { 'POST /Login': { limits: [{ name: 'login', limiter: login }] } },
    });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) statuses.push((await send(`${app.url}/Login`, { method: 'POST' })).status);
      expect(statuses).toEqual([200, 200, 429, 429]);
      // Case sensitive: /login is not the /Login entry, nor a route of the app.
      expect((await send(`${app.url}/login`, { method: 'POST' })).status).toBe(404);
      expect(app.reads.sort()).toEqual(ROUTING);
    } finally {
      await app.close();
    }
  });

  it('are never read without routes entries, or with routeMatching given', async () => {
    for (const options of [
      { limiter: limiterOf(100) },
      { limiter: limiterOf(100), routes: { '/Login': { cost: 2 } }, routeMatching: { caseSensitive: true } },
    ]) {
      const app = await countingApp(factory, options);
      try {
        for (let i = 0; i < 3; i++) expect((await send(`${app.url}/Login`, { method: 'POST' })).status).toBe(200);
        expect(app.reads).toEqual([]);
      } finally {
        await app.close();
      }
    }
  });
});

import { once } from 'node:events';
import { request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { serve } from '@hono/node-server';
import { getConnInfo } from '@hono/node-server/conninfo';
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { createConcurrencyLimiter, memoryHolds } from '../../src/concurrency/index.js';
import { rateLimit } from '../../src/http/hono/index.js';
import { createMemoryLimiter, gcra } from '../../src/index.js';

async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await check()) return;
    await sleep(10);
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** A Hono app whose handler returns a streamed body the test writes and closes (`streams`). */
async function start() {
  const reports = createConcurrencyLimiter({ limit: 5, holdMs: 60_000, store: memoryHolds() });
  const rate = createMemoryLimiter({ algorithm: gcra({ limit: 100, periodMs: 60_000 }), pruneIntervalMs: 0 });
  const streams: ReadableStreamDefaultController<Uint8Array>[] = [];
  const app = new Hono();
  app.use(
    rateLimit({
      limits: { name: 'rate', limiter: rate, key: () => 'k' },
      inFlight: { name: 'reports', limiter: reports, key: () => 'k' },
      clientAddress: (c) => getConnInfo(c).remote.address,
    }),
  );
  app.get('/stream', () => new Response(new ReadableStream<Uint8Array>({ start: (c) => void streams.push(c) })));
  const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }) as Server;
  if (!server.listening) await once(server, 'listening');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/stream`;
  const held = () => reports.held('reports:id:k');
  const close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return { url, streams, held, close, server };
}

function get(url: string) {
  const request = httpRequest(url, { agent: false });
  request.on('error', () => {}); // the destroy below
  request.end();
  return { request, response: once(request, 'response').then(([res]) => res as IncomingMessage) };
}

const chunk = new TextEncoder().encode('token ');

describe('hono 4: a streamed body holds its in-flight slot until it is over', () => {
  it('released when the stream ends, not when the handler returns', async () => {
    const app = await start();
    try {
      const { response } = get(app.url);
      const res = await response;
      app.streams[0]?.enqueue(chunk);
      await once(res, 'data');
      // The handler has returned; the body is still streaming.
      expect(await app.held()).toBe(1);
      app.streams[0]?.close();
      res.resume();
      await once(res, 'end');
      await until(async () => (await app.held()) === 0, 'the release at the end of the body');
    } finally {
      app.server.closeAllConnections();
      await app.close();
    }
  });

  it('released when the client hangs up mid-stream', async () => {
    const app = await start();
    try {
      const { request, response } = get(app.url);
      const res = await response;
      app.streams[0]?.enqueue(chunk);
      await once(res, 'data');
      expect(await app.held()).toBe(1);
      request.destroy();
      await until(async () => (await app.held()) === 0, 'the release on disconnect');
    } finally {
      app.server.closeAllConnections();
      await app.close();
    }
  });
});

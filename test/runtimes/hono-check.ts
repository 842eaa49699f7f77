import assert from 'node:assert/strict';
import { type Context, Hono } from 'hono';
import { createMemoryLimiter, gcra } from 'sluice';
import { type HonoRateLimitOptions, rateLimit } from 'sluice/hono';
import type { RuntimeTestApi } from './conformance.js';

/** A server the runtime started on a free loopback port, and how to stop it. */
export interface RunningServer {
  url: string;
  close(): Promise<void>;
}

/** What differs per runtime: its own server, and its `getConnInfo` (`hono/bun`, `hono/deno`). */
export interface RuntimeHttp {
  serve(fetch: (request: Request, env: unknown) => Response | Promise<Response>): Promise<RunningServer>;
  clientAddress(c: Context): string | undefined;
}

/** The Hono adapter over a memory limiter, on the runtime's own HTTP server, with real requests. */
export function registerHonoChecks(test: RuntimeTestApi, http: RuntimeHttp): void {
  test.describe('hono adapter over the memory store', () => {
    test.it('admits the limit, then answers 429 with RateLimit headers', () =>
      withApp(http, {}, async (url) => {
        const responses = [];
        for (let i = 0; i < 4; i++)
          responses.push(await fetch(url, { headers: { 'x-forwarded-for': `203.0.113.${i}` } }));
        assert.deepEqual(
          responses.map((r) => r.status),
          [200, 200, 200, 429],
          'a forged X-Forwarded-For does not change the socket-address key',
        );
        assert.equal(await responses[0]?.text(), 'ok');
        assert.equal(responses[0]?.headers.get('ratelimit-policy'), '"default";q=3;w=60');
        assert.equal(responses[2]?.headers.get('ratelimit')?.startsWith('"default";r=0;t='), true);
        const denied = responses[3];
        assert.match(denied?.headers.get('ratelimit') ?? '', /^"default";r=0;t=\d+$/);
        assert.ok(Number(denied?.headers.get('retry-after')) >= 1, 'a 429 says when to retry');
        await Promise.all(responses.slice(1).map((r) => r.body?.cancel()));
      }),
    );
    test.it("reads the socket address through the runtime's getConnInfo", () =>
      withApp(http, { allowList: ['loopback'] }, async (url) => {
        for (let i = 0; i < 5; i++) {
          const response = await fetch(url);
          assert.equal(response.status, 200, 'a loopback client on the allow list is never limited');
          assert.equal(response.headers.get('ratelimit'), null, 'and gets no headers');
          await response.text();
        }
      }),
    );
  });
}

async function withApp(
  http: RuntimeHttp,
  options: Partial<HonoRateLimitOptions>,
  run: (url: string) => Promise<void>,
): Promise<void> {
  const limiter = createMemoryLimiter({ algorithm: gcra({ limit: 3, periodMs: 60_000 }) });
  const app = new Hono();
  app.use(rateLimit({ limiter, clientAddress: http.clientAddress, onWarning: false, ...options }));
  app.get('/', (c) => c.text('ok'));
  const server = await http.serve(app.fetch);
  try {
    await run(server.url);
  } finally {
    await server.close();
    await limiter.close();
  }
}

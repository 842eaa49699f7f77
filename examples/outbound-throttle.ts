/*
 * Calling a third-party API that allows 10 requests per rolling second, without ever being told
 * 429: a local fake upstream stands in for the API, and every call goes through `throttle`.
 *
 *   node outbound-throttle.js                                     one process: memory store
 *   REDIS_URL=redis://127.0.0.1:6379 node outbound-throttle.js    a fleet: shared Redis GCRA
 *
 * Sluice is configured a little under the upstream (9 per second, paced) so that scheduling
 * jitter between Sluice's decision and the request's arrival cannot put 11 in one second.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMemoryLimiter, gcra, type Limiter } from 'sluice';
import { createAcquirer, createRedisPauseStore, type PauseStore, throttle } from 'sluice/outbound';

const algorithm = gcra({ limit: 9, periodMs: 1000, burst: 5 });

async function createStore(): Promise<{ limiter: Limiter; pauses?: PauseStore; close(): void }> {
  const url = process.env.REDIS_URL;
  if (!url) return { limiter: createMemoryLimiter({ algorithm }), close: () => {} };
  const [{ Redis }, { createRedisLimiter }] = await Promise.all([import('ioredis'), import('sluice/redis')]);
  const client = new Redis(url);
  return {
    limiter: createRedisLimiter({ client, algorithm, prefix: 'example:outbound:' }),
    pauses: createRedisPauseStore({ client, prefix: 'example:outbound:pause:' }),
    close: () => client.disconnect(),
  };
}

/** The fake third-party API: 10 requests per rolling second, 429 beyond, limits announced in draft-11 headers. */
function startUpstream() {
  const served: number[] = [];
  let refused = 0;
  const server = createServer((_request, response) => {
    const now = performance.now();
    const inWindow = served.filter((at) => at > now - 1000).length;
    response.setHeader('RateLimit-Policy', '"api";q=10;w=1');
    if (inWindow >= 10) {
      refused++;
      response.writeHead(429, { 'Retry-After': '1' }).end();
      return;
    }
    served.push(now);
    response.setHeader('RateLimit', `"api";r=${9 - inWindow};t=1`);
    response.end('{"ok":true}');
  });
  server.listen(0, '127.0.0.1');
  return { server, served, refused: () => refused };
}

const upstream = startUpstream();
await new Promise((resolve) => upstream.server.once('listening', resolve));
const url = `http://127.0.0.1:${(upstream.server.address() as AddressInfo).port}/items`;
const store = await createStore();
// Paced: no bursts. A unit more than 50 ms late for its slot books again (the 10 % margin is 111 ms).
const acquirer = createAcquirer(store.limiter, { pace: true, maxLatenessMs: 50, pauses: store.pauses });

// The wrapped function keeps fetch's signature; its Response feeds 429s and RateLimit headers back.
const throttledFetch = throttle((input: string, init?: RequestInit) => fetch(input, init), {
  limiter: acquirer,
  key: 'partner-api',
  maxWaitMs: 30_000,
  signal: (_input, init) => init?.signal ?? undefined,
  response: (res) => res,
});

const calls = Number(process.env.CALLS ?? 30);
const statuses = await Promise.all(
  Array.from({ length: calls }, async () => {
    const res = await throttledFetch(url, { signal: AbortSignal.timeout(60_000) });
    await res.arrayBuffer();
    return res.status;
  }),
);
const most = Math.max(...upstream.served.map((at) => upstream.served.filter((t) => t >= at && t < at + 1000).length));
console.log(`calls: ${statuses.length}, served: ${upstream.served.length}, 429s: ${upstream.refused()}`);
console.log(`most in any rolling second: ${most}`);
acquirer.close();
store.close();
upstream.server.close();

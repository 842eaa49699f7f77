import { expect } from 'vitest';
import { fixedWindow } from '../../../src/algorithms/fixed-window.js';
import { gcra } from '../../../src/algorithms/gcra.js';
import type { Algorithm } from '../../../src/algorithms/types.js';
import type { SluiceWarning } from '../../../src/http/index.js';
import type { Limiter } from '../../../src/limiter.js';
import { withFailurePolicy } from '../../../src/policy/index.js';
import { createMemoryLimiter } from '../../../src/stores/memory/memory-limiter.js';
import { createRedisLimiter } from '../../../src/stores/redis/index.js';
import type { RedisServer } from '../../support/redis-server.js';
import { send, sendFrom, sendRaw } from './client.js';
import type { Harness, HarnessOptions, StartOptions, TestServer } from './harnesses.js';

/** What every scenario may use besides its harness. */
export interface Env {
  /** A live redis-server. */
  redis: RedisServer;
  /** A limiter on a Redis that is down (connection refused, no offline queue): every call throws StoreUnavailableError. */
  deadLimiter(): Limiter;
}

export interface Scenario {
  name: string;
  run(harness: Harness, env: Env): Promise<void>;
}

/** A manual clock in ms, starting far from 0 so no state looks fresh by accident. */
export function manualClock(start = 1_000_000) {
  let now = start;
  return {
    read: () => now,
    advance(ms: number) {
      now += ms;
    },
  };
}

export function memory(algorithm: Algorithm, clock: () => number = manualClock().read) {
  return createMemoryLimiter({ algorithm, clock, pruneIntervalMs: 0 });
}

export async function withServer(
  harness: Harness,
  options: HarnessOptions,
  run: (server: TestServer) => Promise<void>,
  start?: StartOptions,
): Promise<void> {
  const server = await harness.start(options, start);
  try {
    await run(server);
  } finally {
    await server.close();
  }
}

async function statuses(url: string, headerSets: readonly Record<string, string>[]): Promise<number[]> {
  const out: number[] = [];
  for (const headers of headerSets) out.push((await send(url, { headers })).status);
  return out;
}

const perMinute = (limit: number) => gcra({ limit, periodMs: 60_000 });
let unique = 0;

export const scenarios: readonly Scenario[] = [
  {
    name: 'IPv6 /56: same /64 → 429, same /56 other /64 → 429, other /56 → 200',
    async run(harness) {
      const clock = manualClock();
      const limiter = memory(perMinute(1), clock.read);
      // The test's fetch arrives from loopback, which plays the trusted proxy that writes X-Forwarded-For.
      await withServer(harness, { limiter, trustProxy: 'loopback', onWarning: false }, async ({ url }) => {
        const xff = [
          '2001:db8:abcd:1200::1',
          '2001:db8:abcd:1200::2',
          '2001:db8:abcd:12ff::1',
          '2001:db8:abcd:1300::1',
        ];
        const got = await statuses(
          `${url}/hello`,
          xff.map((ip) => ({ 'x-forwarded-for': ip })),
        );
        expect(got).toEqual([200, 429, 429, 200]);
        expect((await limiter.peek('default:ip:2001:db8:abcd:1200::/56')).remaining).toBe(0);
        expect((await limiter.peek('default:ip:2001:db8:abcd:1300::/56')).remaining).toBe(0);
      });
    },
  },
  {
    name: 'IPv6 prefix /64 configured: same /56 other /64 → 200; IPv4-mapped and zone ids normalised',
    async run(harness) {
      const limiter = memory(perMinute(1), manualClock().read);
      await withServer(
        harness,
        { limiter, trustProxy: 'loopback', ipv6Prefix: 64, onWarning: false },
        async ({ url }) => {
          const xff = [
            '2001:db8:abcd:1200::1',
            '2001:db8:abcd:12ff::1',
            '2001:db8:abcd:1200::2',
            '::ffff:203.0.113.5',
            '203.0.113.5:4711',
          ];
          expect(
            await statuses(
              `${url}/hello`,
              xff.map((ip) => ({ 'x-forwarded-for': ip })),
            ),
          ).toEqual([200, 200, 429, 200, 429]);
          expect((await limiter.peek('default:ip:203.0.113.5')).remaining).toBe(0);
        },
      );
    },
  },
  {
    name: 'trusted proxy, limit 2: third X-Forwarded-For request → 429, keyed 203.0.113.5 whatever the leftmost says',
    async run(harness) {
      const limiter = memory(perMinute(2), manualClock().read);
      const warnings: SluiceWarning[] = [];
      // Stand-in for 10.0.0.1: a test cannot originate TCP from 10.0.0.1 without root network setup, so the
      // trusted proxy is the loopback address the fetch comes from. The walk with a literal 10.0.0.1 socket
      // is pinned in proxy.test.ts and core.test.ts (injected remote address).
      const options = { limiter, trustProxy: '127.0.0.1', onWarning: (w: SluiceWarning) => warnings.push(w) };
      await withServer(harness, options, async ({ url }) => {
        const xff = ['198.51.100.7, 203.0.113.5', '198.51.100.8, 203.0.113.5', '198.51.100.9, 203.0.113.5'];
        expect(
          await statuses(
            `${url}/hello`,
            xff.map((v) => ({ 'x-forwarded-for': v })),
          ),
        ).toEqual([200, 200, 429]);
        expect((await limiter.peek('default:ip:203.0.113.5')).remaining).toBe(0);
        expect((await limiter.peek('default:ip:127.0.0.1')).remaining).toBe(2);
        expect((await limiter.peek('default:ip:198.51.100.7')).remaining).toBe(2);
        // A peer that is not the trusted proxy cannot speak for anyone: keyed by its own socket (127.0.0.2).
        const spoof = await sendFrom('127.0.0.2', `${url}/hello`, { 'x-forwarded-for': '192.0.2.1' });
        expect(spoof.status).toBe(200);
        expect((await limiter.peek('default:ip:127.0.0.2')).remaining).toBe(1);
        expect(warnings).toEqual([]);
      });
    },
  },
  {
    name: 'no trust configured: the same requests are keyed by the socket address and one warning fires',
    async run(harness) {
      const limiter = memory(perMinute(2), manualClock().read);
      const warnings: SluiceWarning[] = [];
      await withServer(harness, { limiter, onWarning: (w) => warnings.push(w) }, async ({ url }) => {
        const xff = ['198.51.100.7, 203.0.113.5', '198.51.100.8, 203.0.113.5', '198.51.100.9, 203.0.113.5'];
        expect(
          await statuses(
            `${url}/hello`,
            xff.map((v) => ({ 'x-forwarded-for': v })),
          ),
        ).toEqual([200, 200, 429]);
        expect((await limiter.peek('default:ip:127.0.0.1')).remaining).toBe(0);
        expect((await limiter.peek('default:ip:203.0.113.5')).remaining).toBe(2);
        expect(warnings.map((w) => w.code)).toEqual(['SLUICE_HTTP_FORWARDED_UNTRUSTED']);
      });
    },
  },
  {
    name: 'Forwarded (RFC 7239) walked right to left when configured; X-Forwarded-For then ignored',
    async run(harness) {
      const limiter = memory(perMinute(1), manualClock().read);
      const options = { limiter, trustProxy: 'loopback', proxyHeader: 'forwarded', onWarning: false } as const;
      await withServer(harness, options, async ({ url }) => {
        const first = await send(`${url}/hello`, {
          headers: {
            forwarded: 'for=198.51.100.7, for="[2001:db8:cafe::17]:4711";proto=https',
            'x-forwarded-for': '192.0.2.1',
          },
        });
        expect(first.status).toBe(200);
        expect((await limiter.peek('default:ip:2001:db8:cafe::/56')).remaining).toBe(0);
        expect((await limiter.peek('default:ip:192.0.2.1')).remaining).toBe(1);
      });
    },
  },
  {
    name: 'IPv4-mapped socket on a dual-stack server is keyed as IPv4',
    async run(harness) {
      const limiter = memory(perMinute(3), manualClock().read);
      await withServer(
        harness,
        { limiter },
        async ({ url }) => {
          expect((await send(`${url}/hello`)).status).toBe(200);
          expect((await limiter.peek('default:ip:127.0.0.1')).remaining).toBe(2);
        },
        { host: '::' },
      );
    },
  },
  {
    name: 'IPv6 socket (::1) is keyed by its /56',
    async run(harness) {
      const limiter = memory(perMinute(3), manualClock().read);
      await withServer(
        harness,
        { limiter },
        async ({ url }) => {
          expect((await send(`${url}/hello`)).status).toBe(200);
          expect((await limiter.peek('default:ip:::/56')).remaining).toBe(2);
        },
        { host: '::1' },
      );
    },
  },
  {
    name: 'login 5/min on real Redis: 50 parallel attempts → exactly 5 reach the handler; 6th sequential denied before it',
    async run(harness, env) {
      const limiter = createRedisLimiter({
        client: env.redis.connect(),
        algorithm: perMinute(5),
        prefix: `http-login-${unique++}:`,
        clock: () => 1_700_000_000_000,
      });
      const options = {
        limits: [{ name: 'login', limiter, key: (r: { header(n: string): string | undefined }) => r.header('x-user') }],
        routes: { 'GET /hello': { skip: true } },
      };
      await withServer(harness, options, async ({ url, hits }) => {
        const parallel = await Promise.all(
          Array.from({ length: 50 }, () => send(`${url}/login`, { method: 'POST', headers: { 'x-user': 'alice' } })),
        );
        expect(parallel.filter((r) => r.status === 200)).toHaveLength(5);
        expect(parallel.filter((r) => r.status === 429)).toHaveLength(45);
        expect(hits.get('/login')).toBe(5);

        for (let attempt = 1; attempt <= 5; attempt++) {
          expect((await send(`${url}/login`, { method: 'POST', headers: { 'x-user': 'bob' } })).status).toBe(200);
        }
        expect(hits.get('/login')).toBe(10);
        const sixth = await send(`${url}/login`, { method: 'POST', headers: { 'x-user': 'bob' } });
        expect(sixth.status).toBe(429);
        expect(sixth.headers.get('retry-after')).toBe('12');
        expect(hits.get('/login')).toBe(10);
      });
    },
  },
  {
    name: 'Retry-After: 5/min exhausted at once → 12 (the real wait), 7 s later → 5, 7.5 s → 5, at 12 s admitted',
    async run(harness) {
      const clock = manualClock();
      const limiter = memory(perMinute(5), clock.read);
      await withServer(harness, { limiter }, async ({ url }) => {
        expect(await statuses(`${url}/hello`, [{}, {}, {}, {}, {}])).toEqual([200, 200, 200, 200, 200]);
        const denied = await send(`${url}/hello`);
        expect(denied.status).toBe(429);
        expect(denied.headers.get('retry-after')).toBe('12');
        expect(denied.headers.get('ratelimit')).toBe('"default";r=0;t=60');
        expect(denied.headers.get('ratelimit-policy')).toBe('"default";q=5;w=60');
        clock.advance(7_000);
        expect((await send(`${url}/hello`)).headers.get('retry-after')).toBe('5');
        clock.advance(500); // 4.5 s left: rounded up, not down
        expect((await send(`${url}/hello`)).headers.get('retry-after')).toBe('5');
        clock.advance(4_499);
        expect((await send(`${url}/hello`)).headers.get('retry-after')).toBe('1');
        clock.advance(1);
        expect((await send(`${url}/hello`)).status).toBe(200);
      });
    },
  },
  {
    name: 'Retry-After: fixed window 3 per 15 s exhausted at t=10 s → 5; at the reset instant t=0 is sent as 0',
    async run(harness) {
      const clock = manualClock();
      const limiter = memory(fixedWindow({ limit: 3, windowMs: 15_000 }), clock.read);
      const options = { limiter, legacyHeaders: true, routes: { 'GET /quota': { cost: 0 } } };
      await withServer(harness, options, async ({ url }) => {
        expect((await send(`${url}/hello`)).status).toBe(200); // t = 0 opens the window
        clock.advance(10_000);
        expect(await statuses(`${url}/hello`, [{}, {}])).toEqual([200, 200]);
        const denied = await send(`${url}/hello`);
        expect(denied.status).toBe(429);
        expect(denied.headers.get('retry-after')).toBe('5');
        expect(denied.headers.get('ratelimit')).toBe('"default";r=0;t=5');
        expect(denied.headers.get('x-ratelimit-reset')).toBe('5');
        clock.advance(5_000); // t = 15 s: the window ends this instant
        const fresh = await send(`${url}/quota`);
        expect(fresh.status).toBe(200);
        expect(fresh.headers.get('ratelimit')).toBe('"default";r=3;t=0');
        expect(fresh.headers.get('x-ratelimit-remaining')).toBe('3');
        expect(fresh.headers.get('x-ratelimit-reset')).toBe('0');
        expect((await send(`${url}/hello`)).status).toBe(200);
      });
    },
  },
  {
    name: 'nested per-IP 10 + per-key 3: the 4th request of the key is 429 and per-IP shows 7 left, not 6',
    async run(harness) {
      const clock = manualClock();
      const perIp = memory(perMinute(10), clock.read);
      const perKey = memory(perMinute(3), clock.read);
      const options = {
        limits: [
          { name: 'per-ip', limiter: perIp },
          {
            name: 'per-key',
            limiter: perKey,
            key: (r: { header(n: string): string | undefined }) => r.header('x-api-key'),
          },
        ],
      };
      await withServer(harness, options, async ({ url }) => {
        const headers = { 'x-api-key': 'k1' };
        expect(await statuses(`${url}/hello`, [headers, headers, headers])).toEqual([200, 200, 200]);
        const fourth = await send(`${url}/hello`, { headers });
        expect(fourth.status).toBe(429);
        expect(fourth.headers.get('ratelimit-policy')).toBe('"per-ip";q=10;w=60, "per-key";q=3;w=60');
        expect(fourth.headers.get('ratelimit')).toBe('"per-ip";r=7;t=18, "per-key";r=0;t=60');
        expect(fourth.headers.get('retry-after')).toBe('20');
        expect(JSON.parse(fourth.body)).toMatchObject({ status: 429, limit: 'per-key', retryAfter: 20 });
        expect((await perIp.peek('per-ip:ip:127.0.0.1')).remaining).toBe(7);
        const other = await send(`${url}/hello`, { headers: { 'x-api-key': 'k2' } });
        expect(other.status).toBe(200);
        expect(other.headers.get('ratelimit')).toBe('"per-ip";r=6;t=24, "per-key";r=2;t=20');
      });
    },
  },
  {
    name: 'nested with a limiter that cannot refund (fixed window): check-first, the denied request charges none',
    async run(harness) {
      const clock = manualClock();
      const perIp = memory(fixedWindow({ limit: 10, windowMs: 60_000 }), clock.read);
      const perKey = memory(perMinute(3), clock.read);
      const options = {
        limits: [
          { name: 'per-ip', limiter: perIp },
          {
            name: 'per-key',
            limiter: perKey,
            key: (r: { header(n: string): string | undefined }) => r.header('x-api-key'),
          },
        ],
      };
      await withServer(harness, options, async ({ url }) => {
        const headers = { 'x-api-key': 'k1' };
        expect(await statuses(`${url}/hello`, [headers, headers, headers, headers])).toEqual([200, 200, 200, 429]);
        expect((await perIp.peek('per-ip:ip:127.0.0.1')).remaining).toBe(7);
      });
    },
  },
  {
    name: 'per-route cost: a report costs 10 units of the client budget; a cost above the limit → 413',
    async run(harness) {
      const clock = manualClock();
      const limiter = memory(gcra({ limit: 15, periodMs: 60_000 }), clock.read);
      const options = { limiter, routes: { 'GET /report': { cost: 10 }, 'POST /login': { cost: 16 } } };
      await withServer(harness, options, async ({ url, hits }) => {
        const report = await send(`${url}/report`);
        expect(report.status).toBe(200);
        expect(report.headers.get('ratelimit')).toBe('"default";r=5;t=40');
        const again = await send(`${url}/report`);
        expect(again.status).toBe(429);
        expect(again.headers.get('retry-after')).toBe('20');
        expect((await send(`${url}/hello`)).headers.get('ratelimit')).toBe('"default";r=4;t=44');
        const never = await send(`${url}/login`, { method: 'POST' });
        expect(never.status).toBe(413);
        expect(never.headers.get('retry-after')).toBeNull();
        expect(JSON.parse(never.body)).toMatchObject({ status: 413, limit: 'default' });
        expect(hits.get('/report')).toBe(1);
        expect(hits.get('/login')).toBeUndefined();
      });
    },
  },
  {
    name: 'per-route failure mode: store down → login fails closed (503), the rest fails open (200, one warning)',
    async run(harness, env) {
      const warnings: SluiceWarning[] = [];
      const storeErrors: unknown[] = [];
      const options = {
        limiter: env.deadLimiter(),
        failure: 'open',
        routes: { 'POST /login': { failure: 'closed' } },
        onWarning: (w: SluiceWarning) => warnings.push(w),
        onStoreError: (error: unknown) => storeErrors.push(error),
      } as const;
      await withServer(harness, options, async ({ url, hits }) => {
        const open = await send(`${url}/hello`);
        expect(open.status).toBe(200);
        expect(open.headers.get('ratelimit')).toBeNull();
        expect((await send(`${url}/hello`)).status).toBe(200);
        const closed = await send(`${url}/login`, { method: 'POST' });
        expect(closed.status).toBe(503);
        expect(closed.headers.get('content-type')).toMatch(/^application\/problem\+json/);
        expect(JSON.parse(closed.body)).toMatchObject({
          status: 503,
          title: 'Service Unavailable',
          reason: 'store-unavailable',
        });
        expect(hits.get('/hello')).toBe(2);
        expect(hits.get('/login')).toBeUndefined();
        expect(warnings.map((w) => w.code)).toEqual(['SLUICE_HTTP_STORE_UNAVAILABLE']);
        expect(storeErrors).toHaveLength(3);
        expect(storeErrors.every((e) => (e as { code?: string }).code === 'ERR_SLUICE_STORE_UNAVAILABLE')).toBe(true);
      });
    },
  },
  {
    name: 'failure policy (withFailurePolicy) decides: a degraded fail-closed denial → 503 with the degraded reason',
    async run(harness, env) {
      const limiter = withFailurePolicy(env.deadLimiter(), { failure: 'open', onWarning: false });
      const options = { limiter, routes: { 'POST /login': { failure: 'closed' } } } as const;
      await withServer(harness, options, async ({ url, hits }) => {
        const open = await send(`${url}/hello`);
        expect(open.status).toBe(200);
        expect(open.headers.get('ratelimit')).toBeNull(); // a degraded decision describes no real budget
        const closed = await send(`${url}/login`, { method: 'POST' });
        expect(closed.status).toBe(503);
        expect(JSON.parse(closed.body)).toMatchObject({ status: 503, limit: 'default', reason: 'connection' });
        expect(hits.get('/login')).toBeUndefined();
      });
    },
  },
  {
    name: 'skip and allow lists: allow-listed clients and skipped routes are not limited and get no headers',
    async run(harness) {
      const limiter = memory(perMinute(1), manualClock().read);
      const options = {
        limiter,
        allowList: ['198.51.100.0/24'],
        trustProxy: 'loopback',
        skip: (r: { header(n: string): string | undefined }) => r.header('x-internal') === 'yes',
        routes: { 'GET /quota': { skip: true } },
      };
      await withServer(harness, options, async ({ url }) => {
        const allowed = { 'x-forwarded-for': '198.51.100.9' };
        expect(await statuses(`${url}/hello`, [allowed, allowed, allowed])).toEqual([200, 200, 200]);
        expect(await statuses(`${url}/quota`, [{}, {}])).toEqual([200, 200]);
        expect(await statuses(`${url}/hello`, [{ 'x-internal': 'yes' }, { 'x-internal': 'yes' }])).toEqual([200, 200]);
        expect((await send(`${url}/quota`)).headers.get('ratelimit')).toBeNull();
        expect(await statuses(`${url}/hello`, [{}, {}])).toEqual([200, 429]);
      });
    },
  },
  {
    name: '429 body is RFC 9457 problem+json; draft-6/7 and legacy headers describe the closest limit',
    async run(harness) {
      const clock = manualClock();
      const limiter = memory(perMinute(1), clock.read);
      await withServer(
        harness,
        { limiter, headers: 'draft-7', legacyHeaders: 'epoch', epochClock: () => 1_700_000_000_000 },
        async ({ url }) => {
          const ok = await send(`${url}/hello`);
          expect(ok.headers.get('ratelimit')).toBe('limit=1, remaining=0, reset=60');
          expect(ok.headers.get('ratelimit-policy')).toBe('1;w=60');
          expect(ok.headers.get('x-ratelimit-reset')).toBe('1700000060');
          const denied = await send(`${url}/hello`);
          expect(denied.status).toBe(429);
          expect(denied.headers.get('content-type')).toMatch(/^application\/problem\+json/);
          expect(JSON.parse(denied.body)).toEqual({
            type: 'about:blank',
            title: 'Too Many Requests',
            status: 429,
            detail: 'Rate limit "default" exceeded; retry in 60 s.',
            limit: 'default',
            retryAfter: 60,
          });
        },
      );
      await withServer(harness, { limiter: memory(perMinute(2), clock.read), headers: 'draft-6' }, async ({ url }) => {
        const ok = await send(`${url}/hello`);
        expect([
          ok.headers.get('ratelimit-limit'),
          ok.headers.get('ratelimit-remaining'),
          ok.headers.get('ratelimit-reset'),
        ]).toEqual(['2', '1', '30']);
      });
    },
  },
  {
    name: 'an error thrown by a key function reaches the framework error handler (500), the handler does not run',
    async run(harness) {
      const limiter = memory(perMinute(5), manualClock().read);
      const options = {
        limits: [
          {
            limiter,
            key: () => {
              throw new Error('key function bug');
            },
          },
        ],
      };
      const logged = console.error;
      console.error = () => {}; // node:http's wrapper and Koa log the error; keep the test output clean
      try {
        await withServer(harness, options, async ({ url, hits }) => {
          expect((await send(`${url}/hello`)).status).toBe(500);
          expect(hits.get('/hello')).toBeUndefined();
        });
      } finally {
        console.error = logged;
      }
    },
  },
  {
    name: 'a key function returning a number, object or NaN: 500 from the framework, nothing charged, no shared key',
    async run(harness) {
      const limiter = memory(perMinute(5), manualClock().read);
      const returned: Record<string, unknown> = { number: 42, object: { id: 'u1' }, nan: Number.NaN };
      const key = (r: { header(name: string): string | undefined }) => returned[r.header('x-kind') ?? ''] as string;
      const logged = console.error;
      console.error = () => {}; // node:http's wrapper and Koa log the error; keep the test output clean
      try {
        await withServer(harness, { limits: [{ name: 'per-user', limiter, key }] }, async ({ url, hits }) => {
          const statuses = [];
          for (const kind of ['number', 'object', 'nan', 'object'])
            statuses.push((await send(`${url}/hello`, { headers: { 'x-kind': kind } })).status);
          expect(statuses).toEqual([500, 500, 500, 500]);
          expect(hits.get('/hello')).toBeUndefined();
          expect(limiter.size).toBe(0);
        });
      } finally {
        console.error = logged;
      }
    },
  },
  {
    name: "key namespaces: X-Api-Key naming a client IP spends its own bucket, not that IP's",
    async run(harness) {
      const limiter = memory(perMinute(2), manualClock().read);
      const options = {
        limits: [{ limiter, key: (r: { header(name: string): string | undefined }) => r.header('x-api-key') }],
        onWarning: false as const,
      };
      await withServer(harness, options, async ({ url }) => {
        const forged = [];
        for (let i = 0; i < 3; i++)
          forged.push((await sendFrom('127.0.0.2', `${url}/hello`, { 'x-api-key': '127.0.0.1' })).status);
        expect(forged).toEqual([200, 200, 429]);
        expect((await sendFrom('127.0.0.1', `${url}/hello`)).status).toBe(200);
        expect((await limiter.peek('default:ip:127.0.0.1')).remaining).toBe(1);
      });
    },
  },
  {
    name: 'fuzzed forwarding headers (garbage, huge, repeated, ports, brackets): no crash, deterministic keys',
    async run(harness) {
      const limiter = memory(gcra({ limit: 1000, periodMs: 60_000 }), manualClock().read);
      await withServer(harness, { limiter, trustProxy: 'loopback', onWarning: false }, async ({ port }) => {
        const cases: [string[], string][] = [
          [['x-forwarded-for: 203.0.113.5', 'x-forwarded-for: 198.51.100.1'], 'default:ip:198.51.100.1'],
          [['x-forwarded-for: garbage'], 'default:ip:127.0.0.1'],
          [[`x-forwarded-for: ${'9,'.repeat(3000)}203.0.113.77`], 'default:ip:203.0.113.77'],
          [[`x-forwarded-for: ${'x'.repeat(8000)}`], 'default:ip:127.0.0.1'],
          [['x-forwarded-for: [2001:db8::1]:443'], 'default:ip:2001:db8::/56'],
          [['x-forwarded-for: [2001:db8::1'], 'default:ip:127.0.0.1'],
          [['x-forwarded-for: 203.0.113.5:99999'], 'default:ip:203.0.113.5'],
          [['x-forwarded-for: 999.1.1.1'], 'default:ip:127.0.0.1'],
          [['x-forwarded-for: ,,, ,'], 'default:ip:127.0.0.1'],
          [['x-forwarded-for: fe80::1%eth0'], 'default:ip:fe80::/56'],
          [['x-forwarded-for: \u00ff\u00fe'], 'default:ip:127.0.0.1'],
          [['forwarded: for="[::1', 'x-forwarded-for: 203.0.113.9'], 'default:ip:203.0.113.9'],
        ];
        const expected = new Map<string, number>();
        for (const [lines, key] of cases) {
          for (let round = 0; round < 2; round++) {
            const head = `GET /hello HTTP/1.1\r\nHost: x\r\n${lines.join('\r\n')}\r\nConnection: close\r\n\r\n`;
            expect(await sendRaw(port, head)).toBe(200);
            expected.set(key, (expected.get(key) ?? 0) + 1);
          }
        }
        for (const [key, count] of expected) expect((await limiter.peek(key)).remaining, key).toBe(1000 - count);
        // Bytes Node's HTTP parser refuses never reach the adapter: 400 from Node, nothing charged.
        const before = (await limiter.peek('default:ip:127.0.0.1')).remaining;
        expect(
          await sendRaw(
            port,
            'GET /hello HTTP/1.1\r\nHost: x\r\nx-forwarded-for: 1.2.3.4\u0000\r\nConnection: close\r\n\r\n',
          ),
        ).toBe(400);
        expect((await limiter.peek('default:ip:127.0.0.1')).remaining).toBe(before);
      });
    },
  },
];

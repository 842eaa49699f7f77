import { expect, vi } from 'vitest';
import { gcra } from '../../../src/algorithms/gcra.js';
import type { RequestInfo } from '../../../src/http/index.js';
import { hangUp, postJson, send } from './client.js';
import type { Harness } from './harnesses.js';
import { memory, withServer } from './scenarios.js';

/** A scenario of the application recipes (docs/http.md), run on every adapter. */
export interface AppScenario {
  name: string;
  run(harness: Harness): Promise<void>;
}

type Info = { header(name: string): string | undefined };

const perMinute = (limit: number) => gcra({ limit, periodMs: 60_000 });

export const appScenarios: readonly AppScenario[] = [
  {
    name: 'a rule that does not apply: key → null and skip leave it uncharged and unreported; undefined → IP',
    async run(harness) {
      const perIp = memory(perMinute(10));
      const perKey = memory(perMinute(2));
      const anonymous = memory(perMinute(3));
      const options = {
        limits: [
          { name: 'per-ip', limiter: perIp, key: () => undefined },
          { name: 'per-key', limiter: perKey, key: (r: Info) => r.header('x-api-key') ?? null },
          { name: 'anonymous', limiter: anonymous, skip: (r: Info) => r.header('x-api-key') !== undefined },
        ],
      };
      await withServer(harness, options, async ({ url, hits }) => {
        const bare = await send(`${url}/hello`);
        expect(bare.status).toBe(200);
        expect(bare.headers.get('ratelimit')).toBe('"per-ip";r=9;t=6, "anonymous";r=2;t=20');
        expect((await perKey.peek('per-key:ip:127.0.0.1')).remaining).toBe(2);
        expect((await perKey.peek('per-key:id:null')).remaining).toBe(2);

        const keyed = { 'x-api-key': 'k1' };
        const first = await send(`${url}/hello`, { headers: keyed });
        expect(first.headers.get('ratelimit')).toBe('"per-ip";r=8;t=12, "per-key";r=1;t=30');
        expect((await send(`${url}/hello`, { headers: keyed })).status).toBe(200);
        const denied = await send(`${url}/hello`, { headers: keyed });
        expect(denied.status).toBe(429);
        expect(JSON.parse(denied.body)).toMatchObject({ limit: 'per-key' });
        expect((await anonymous.peek('anonymous:ip:127.0.0.1')).remaining).toBe(2);

        expect((await send(`${url}/hello`)).status).toBe(200);
        expect((await send(`${url}/hello`)).status).toBe(200);
        expect((await send(`${url}/hello`)).status).toBe(429);
        expect(hits.get('/hello')).toBe(5);
      });
    },
  },
  {
    name: 'no rule applies: the request passes with no RateLimit headers',
    async run(harness) {
      const limiter = memory(perMinute(1));
      const options = { limits: [{ limiter, key: (r: Info) => r.header('x-api-key') ?? null }] };
      await withServer(harness, options, async ({ url, hits }) => {
        for (let i = 0; i < 3; i++) {
          const reply = await send(`${url}/hello`);
          expect(reply.status).toBe(200);
          expect(reply.headers.get('ratelimit')).toBeNull();
          expect(reply.headers.get('ratelimit-policy')).toBeNull();
        }
        expect(hits.get('/hello')).toBe(3);
      });
    },
  },
  {
    name: 'login keyed by the JSON body username + client IP, 5 per 15 min: 6th → 429, another username → 200',
    async run(harness) {
      const limiter = memory(gcra({ limit: 5, periodMs: 15 * 60_000 }));
      const login = {
        name: 'login',
        limiter,
        key: async (r: RequestInfo<unknown>) => {
          const body = (await harness.body(r.request)) as { username?: unknown } | undefined;
          return typeof body?.username === 'string' ? `${body.username}@${r.ipKey}` : undefined;
        },
      };
      const options = {
        routes: { 'POST /login': { limits: [login] } },
        limiter: memory(perMinute(100)),
        hook: 'preValidation' as const,
      };
      await withServer(harness, options, async ({ url, hits }) => {
        const alice = [];
        for (let i = 0; i < 6; i++) alice.push((await postJson(`${url}/login`, { username: 'alice' })).status);
        expect(alice).toEqual([200, 200, 200, 200, 200, 429]);
        const bob = await postJson(`${url}/login`, { username: 'bob' });
        expect(bob.status).toBe(200);
        expect(bob.headers.get('ratelimit')).toBe('"default";r=94;t=4, "login";r=4;t=180');
        expect((await limiter.peek('login:id:alice@127.0.0.1')).remaining).toBe(0);
        expect(hits.get('/login')).toBe(6);
      });
    },
  },
  {
    name: 'app-wide limit + route-level login limit: responses list both policies; the 429 carries and names login',
    async run(harness) {
      const perIp = memory(perMinute(10));
      const login = memory(perMinute(2));
      const options = { limits: [{ name: 'per-ip', limiter: perIp }] };
      const start = { login: [{ name: 'login', limiter: login }] };
      await withServer(
        harness,
        options,
        async ({ url }) => {
          const attempt = () => send(`${url}/login`, { method: 'POST' });
          const first = await attempt();
          expect(first.status).toBe(200);
          expect(entries(first.headers.get('ratelimit-policy'))).toEqual(['"login";q=2;w=60', '"per-ip";q=10;w=60']);
          expect(entries(first.headers.get('ratelimit'))).toEqual(['"login";r=1;t=30', '"per-ip";r=9;t=6']);
          expect((await attempt()).status).toBe(200);
          const denied = await attempt();
          expect(denied.status).toBe(429);
          expect(entries(denied.headers.get('ratelimit-policy'))).toEqual(['"login";q=2;w=60', '"per-ip";q=10;w=60']);
          // per-ip: r=8 where one policy charges both all or nothing (Fastify route config); r=7 where the
          // app-wide middleware charged before the route's denied (two middlewares, two decisions).
          expect(entries(denied.headers.get('ratelimit'))).toEqual([
            '"login";r=0;t=60',
            expect.stringMatching(/^"per-ip";r=[78];t=1[28]$/),
          ]);
          expect(denied.headers.get('retry-after')).toBe('30');
          expect(JSON.parse(denied.body)).toMatchObject({ status: 429, limit: 'login', retryAfter: 30 });
          const other = await send(`${url}/hello`);
          expect(entries(other.headers.get('ratelimit-policy'))).toEqual(['"per-ip";q=10;w=60']);
        },
        start,
      );
    },
  },
  {
    name: 'a handler that throws: 500 from the framework, the next request is served',
    async run(harness) {
      const options = { limiter: memory(perMinute(10)) };
      await withServer(harness, options, async ({ url, hits }) => {
        await muted(async () => {
          expect((await send(`${url}/hello`, { headers: { 'x-outcome': 'throw' } })).status).toBe(500);
        });
        expect((await send(`${url}/hello`)).status).toBe(200);
        expect(hits.get('/hello')).toBe(2);
      });
    },
  },
  {
    name: 'count by outcome: 401, a throwing handler (500) and a hang-up count; 200 is given back',
    async run(harness) {
      const limiter = memory(gcra({ limit: 5, periodMs: 15 * 60_000 }));
      const login = { name: 'login', limiter, countWhen: (status: number) => status >= 400 };
      const options = { limiter: memory(perMinute(100)), routes: { 'POST /login': { limits: [login] } } };
      await withServer(harness, options, async ({ url, hits }) => {
        const left = async () => (await limiter.peek('login:ip:127.0.0.1')).remaining;
        const attempt = async (outcome: string) =>
          (await send(`${url}/login`, { method: 'POST', headers: { 'x-outcome': outcome } })).status;
        expect([await attempt('200'), await attempt('202'), await attempt('200')]).toEqual([200, 202, 200]);
        await vi.waitFor(async () => expect(await left()).toBe(5));
        expect(await attempt('401')).toBe(401);
        await muted(async () => expect(await attempt('throw')).toBe(500));
        await hangUp(`${url}/login`, { 'x-outcome': 'hang' }, () => hits.get('/login') === 6);
        await vi.waitFor(async () => expect(await left()).toBe(2));
        expect([await attempt('200'), await attempt('401'), await attempt('401')]).toEqual([200, 401, 401]);
        expect(await attempt('200')).toBe(429);
        expect(hits.get('/login')).toBe(9);
      });
    },
  },
  {
    name: 'count by outcome, per route: 50 parallel failed logins vs 5 → 5 reach the handler; a success resets',
    async run(harness) {
      const limiter = memory(gcra({ limit: 5, periodMs: 15 * 60_000 }));
      const login = { name: 'login', limiter, key: (r: Info) => r.header('x-user') };
      const route = { limits: [login], countWhen: (s: number) => s >= 400, resetWhen: (s: number) => s < 400 };
      const options = { limiter: memory(perMinute(1000)), routes: { 'POST /login': route } };
      await withServer(harness, options, async ({ url, hits }) => {
        const attempt = async (user: string, outcome: string) =>
          (await send(`${url}/login`, { method: 'POST', headers: { 'x-user': user, 'x-outcome': outcome } })).status;
        const burst = await Promise.all(Array.from({ length: 50 }, () => attempt('mallory', '401')));
        expect(burst.filter((status) => status === 401)).toHaveLength(5);
        expect(burst.filter((status) => status === 429)).toHaveLength(45);
        expect(hits.get('/login')).toBe(5);

        expect([await attempt('alice', '401'), await attempt('alice', '401')]).toEqual([401, 401]);
        expect((await limiter.peek('login:id:alice')).remaining).toBe(3);
        expect(await attempt('alice', '200')).toBe(200);
        await vi.waitFor(async () => expect((await limiter.peek('login:id:alice')).remaining).toBe(5));
        expect((await limiter.peek('login:id:mallory')).remaining).toBe(0);
      });
    },
  },
];

/** The entries of a draft-11 list field, sorted (nested middlewares write them in framework order). */
function entries(field: string | null): string[] {
  return (field ?? '').split(', ').sort();
}

/** Runs `body` with console.error silenced: frameworks log the error of a throwing handler. */
async function muted(body: () => Promise<void>): Promise<void> {
  const logged = console.error;
  console.error = () => {};
  try {
    await body();
  } finally {
    console.error = logged;
  }
}

import { setTimeout } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { createHttpLimiter, settleReservation } from '../../src/http/index.js';
import { ConfigError, createMemoryLimiter, fixedWindow, gcra, type Limiter } from '../../src/index.js';
import { createRedisLimiter } from '../../src/stores/redis/index.js';
import { useRedisServer } from '../support/redis-server.js';
import { send } from './support/client.js';
import { type Harness, harnesses } from './support/harnesses.js';

const redis = useRedisServer({ connections: 1 });
const frozen = () => 1_000_000;
const tokensPerMinute = () =>
  createMemoryLimiter({ algorithm: gcra({ limit: 10_000, periodMs: 60_000 }), clock: frozen, pruneIntervalMs: 0 });

/**
 * Each harness's app with a `tokens` limit reserving 1,000 per request. The key function hands
 * the framework's request object out (`seen`), the one its handler gets (node/Express `req`,
 * Fastify `request`, Hono `c`, Koa `ctx`), so the test settles as a handler would.
 */
function startWith(harness: Harness, limiter: Limiter, seen: object[]) {
  return harness.start({
    limits: {
      name: 'tokens',
      limiter,
      cost: 1000,
      key: (info) => {
        seen.push(info.request as object);
        return info.header('x-tenant') ?? null;
      },
    },
    reservations: ['tokens'],
  });
}

/** Sends one request for tenant t1 and settles its reservation at `used`. */
async function reserveAndSettle(url: string, seen: object[], used: number) {
  const reply = await send(`${url}/hello`, { headers: { 'x-tenant': 't1' } });
  await settleReservation(seen.at(-1) as object, 'tokens', used);
  return reply;
}

describe('HTTP reservations through real HTTP', () => {
  for (const harness of harnesses) {
    it(`${harness.name}: estimate 1,000 tokens, settle 640: 360 go back; above the estimate is debt`, async () => {
      const limiter = tokensPerMinute();
      const seen: object[] = [];
      const server = await startWith(harness, limiter, seen);
      try {
        const first = await reserveAndSettle(server.url, seen, 640);
        expect(first.status).toBe(200);
        expect(first.headers.get('ratelimit')).toMatch(/^"tokens";r=9000;/);
        expect((await limiter.peek('tokens:id:t1')).remaining).toBe(9360);
        const second = await reserveAndSettle(server.url, seen, 9000);
        expect(second.headers.get('ratelimit')).toMatch(/^"tokens";r=8360;/);
        // 8,000 over the estimate: debt past empty, the next request waits it out.
        expect((await send(`${server.url}/hello`, { headers: { 'x-tenant': 't1' } })).status).toBe(429);
      } finally {
        await server.close();
      }
    });
  }
});

describe('settleReservation', () => {
  it('on a real redis-server: the refund and the debt land in Redis', async () => {
    const limiter = createRedisLimiter({
      client: redis.redis(0),
      algorithm: gcra({ limit: 10_000, periodMs: 60_000 }),
      prefix: 'http-reservations:',
      clock: frozen,
    });
    const seen: object[] = [];
    const server = await startWith(harnesses[0] as Harness, limiter, seen);
    try {
      await reserveAndSettle(server.url, seen, 640);
      expect((await limiter.peek('tokens:id:t1')).remaining).toBe(9360);
      await reserveAndSettle(server.url, seen, 1500);
      expect((await limiter.peek('tokens:id:t1')).remaining).toBe(7860);
    } finally {
      await server.close();
    }
  });

  it('idempotent for the same actual; another actual, an unknown name or request is a ReservationError', async () => {
    const limiter = tokensPerMinute();
    const http = createHttpLimiter<object>({
      limits: { name: 'tokens', limiter, cost: 1000 },
      reservations: ['tokens'],
    });
    const request = {};
    const facts = { request, method: 'GET', path: '/', header: () => undefined, remoteAddress: '127.0.0.1' };
    expect((await http.check(facts)).action).toBe('continue');
    await settleReservation(request, 'tokens', 600);
    await settleReservation(request, 'tokens', 600);
    expect((await limiter.peek('tokens:ip:127.0.0.1')).remaining).toBe(9400);
    await expect(settleReservation(request, 'tokens', 700)).rejects.toMatchObject({ code: 'ERR_SLUICE_RESERVATION' });
    await expect(settleReservation(request, 'other', 1)).rejects.toMatchObject({ code: 'ERR_SLUICE_RESERVATION' });
    await expect(settleReservation({}, 'tokens', 1)).rejects.toMatchObject({ code: 'ERR_SLUICE_RESERVATION' });
    await expect(settleReservation(request, 'tokens', -1)).rejects.toMatchObject({ code: 'ERR_SLUICE_INVALID_COST' });
  });

  it('past its ttlMs a reservation stands at the estimate: a late settle is a ReservationError', async () => {
    const limiter = tokensPerMinute();
    const http = createHttpLimiter<object>({
      limits: [
        { name: 'tokens', limiter, cost: 1000 },
        { name: 'calls', limiter, cost: 100, key: () => 'calls' },
      ],
      reservations: [{ name: 'tokens', ttlMs: 20 }, 'calls'],
    });
    const request = {};
    const facts = { request, method: 'GET', path: '/', header: () => undefined, remoteAddress: '127.0.0.1' };
    expect((await http.check(facts)).action).toBe('continue');
    await setTimeout(40); // the handler hangs past the 20 ms
    await expect(settleReservation(request, 'tokens', 600)).rejects.toThrow(/expired/);
    expect((await limiter.peek('tokens:ip:127.0.0.1')).remaining).toBe(9000);
    // The other reservation keeps the default 60,000 ms, as reserve().
    await settleReservation(request, 'calls', 40);
    expect((await limiter.peek('calls:id:calls')).remaining).toBe(9960);
  });

  it('a denied request opens no reservation', async () => {
    const limiter = tokensPerMinute();
    await limiter.limit('tokens:ip:127.0.0.1', { cost: 9500 });
    const http = createHttpLimiter<object>({
      limits: { name: 'tokens', limiter, cost: 1000 },
      reservations: ['tokens'],
    });
    const request = {};
    const facts = { request, method: 'GET', path: '/', header: () => undefined, remoteAddress: '127.0.0.1' };
    expect((await http.check(facts)).action).toBe('respond');
    await expect(settleReservation(request, 'tokens', 0)).rejects.toMatchObject({ code: 'ERR_SLUICE_RESERVATION' });
    expect((await limiter.peek('tokens:ip:127.0.0.1')).remaining).toBe(500);
  });

  it('ConfigError for a name that is no limit, or a limiter that cannot refund', () => {
    const limiter = tokensPerMinute();
    const windowed = createMemoryLimiter({ algorithm: fixedWindow({ limit: 10, windowMs: 1000 }) });
    expect(() => createHttpLimiter({ limits: { name: 'tokens', limiter }, reservations: ['nope'] })).toThrow(
      ConfigError,
    );
    expect(() => createHttpLimiter({ limits: { name: 'w', limiter: windowed }, reservations: ['w'] })).toThrow(
      /refund/,
    );
    for (const ttlMs of [0, -1, 1.5, Number.NaN]) {
      expect(() =>
        createHttpLimiter({ limits: { name: 'tokens', limiter }, reservations: [{ name: 'tokens', ttlMs }] }),
      ).toThrow(/reservations\["tokens"\]\.ttlMs/);
    }
  });
});

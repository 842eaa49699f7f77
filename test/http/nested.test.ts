import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { fixedWindow } from '../../src/algorithms/fixed-window.js';
import { gcra } from '../../src/algorithms/gcra.js';
import { type Charge, chargeAll } from '../../src/http/nested.js';
import { createMemoryLimiter } from '../../src/stores/memory/memory-limiter.js';
import { createRedisLimiter } from '../../src/stores/redis/index.js';
import { freePort } from '../support/redis-server.js';

const clock = () => 1_000_000;
const window = (limit: number) =>
  createMemoryLimiter({ algorithm: fixedWindow({ limit, windowMs: 60_000 }), clock, pruneIntervalMs: 0 });
const bucket = (limit: number) =>
  createMemoryLimiter({ algorithm: gcra({ limit, periodMs: 60_000 }), clock, pruneIntervalMs: 0 });
const noRefundError = () => {
  throw new Error('no refund should fail here');
};

describe('chargeAll', () => {
  it('one limit: a single atomic call', async () => {
    const limiter = window(1);
    const charge: Charge = { name: 'a', limiter, key: 'k', cost: 1 };
    expect(await chargeAll([charge], noRefundError)).toMatchObject({ allowed: true, strategy: 'single' });
    const denied = await chargeAll([charge], noRefundError);
    expect(denied).toMatchObject({ allowed: false, strategy: 'single' });
    expect(denied.results[0]?.state).toBe('denied');
  });

  it('every limiter refunds (GCRA): charged in parallel, the admitted one refunded and re-read exactly', async () => {
    const perIp = bucket(10);
    const perKey = bucket(3);
    expect(typeof perIp.refund).toBe('function');
    const charges: Charge[] = [
      { name: 'per-ip', limiter: perIp, key: 'ip', cost: 1 },
      { name: 'per-key', limiter: perKey, key: 'k', cost: 1 },
    ];
    for (let i = 0; i < 3; i++) expect((await chargeAll(charges, noRefundError)).allowed).toBe(true);
    const fourth = await chargeAll(charges, noRefundError);
    expect(fourth.strategy).toBe('refund');
    expect(fourth.allowed).toBe(false);
    expect(fourth.results.map((r) => r.state)).toEqual(['refunded', 'denied']);
    expect(fourth.results[0]?.decision).toMatchObject({ remaining: 7, resetAfterMs: 18_000 });
    expect((await perIp.peek('ip')).remaining).toBe(7);
  });

  it('a limiter without refund (fixed window): read first, the predicted denial asked first, nothing charged', async () => {
    const perIp = window(10);
    const perKey = window(3);
    expect(perIp.refund).toBeUndefined();
    const charges: Charge[] = [
      { name: 'per-ip', limiter: perIp, key: 'ip', cost: 1 },
      { name: 'per-key', limiter: perKey, key: 'k', cost: 1 },
    ];
    for (let i = 0; i < 3; i++) expect((await chargeAll(charges, noRefundError)).allowed).toBe(true);
    const fourth = await chargeAll(charges, noRefundError);
    expect(fourth).toMatchObject({ allowed: false, strategy: 'check-first' });
    expect(fourth.results.map((r) => r.state)).toEqual(['read', 'denied']);
    expect(fourth.results[0]?.decision).toMatchObject({ remaining: 7, resetAfterMs: 60_000 });
    expect((await perIp.peek('ip')).remaining).toBe(7);
  });

  it('check-first, documented race: a concurrent request spends between read and charge; no limit over-admits, and the loser stays charged by the non-refundable limit asked before', async () => {
    const perIp = window(2);
    await perIp.limit('ip'); // one unit left on the shared per-IP limit
    const perKey = window(1);
    const request = (key: string): Charge[] => [
      { name: 'per-key', limiter: perKey, key, cost: 1 },
      { name: 'per-ip', limiter: perIp, key: 'ip', cost: 1 },
    ];
    // Both read "1 left" everywhere, then interleave: A per-key, B per-key, A per-ip (last unit), B per-ip denied.
    const [a, b] = await Promise.all([chargeAll(request('a'), noRefundError), chargeAll(request('b'), noRefundError)]);
    expect([a.allowed, b.allowed]).toEqual([true, false]);
    expect(b.results.map((r) => r.state)).toEqual(['charged', 'denied']);
    expect((await perIp.peek('ip')).remaining).toBe(0); // 2 admitted in all: never beyond the limit
    expect((await perKey.peek('b')).remaining).toBe(0); // the documented leak: B's per-key unit stays spent
  });

  it('the same race with refundable limiters leaves the loser charged by none', async () => {
    const perIp = bucket(2);
    await perIp.limit('ip');
    const perKey = bucket(1);
    const request = (key: string): Charge[] => [
      { name: 'per-key', limiter: perKey, key, cost: 1 },
      { name: 'per-ip', limiter: perIp, key: 'ip', cost: 1 },
    ];
    const [a, b] = await Promise.all([chargeAll(request('a'), noRefundError), chargeAll(request('b'), noRefundError)]);
    expect([a.allowed, b.allowed]).toEqual([true, false]);
    expect(b.results.map((r) => r.state)).toEqual(['refunded', 'denied']);
    expect((await perKey.peek('b')).remaining).toBe(1);
  });

  it('mixed limiters: a refundable limit is charged before one that cannot refund, so a race leaks nothing', async () => {
    const shared = bucket(2); // refundable, shared by both requests, one unit left
    await shared.limit('ip');
    const plain = window(1); // cannot refund; per request, one unit each
    const request = (key: string): Charge[] => [
      { name: 'plain', limiter: plain, key, cost: 1 },
      { name: 'shared', limiter: shared, key: 'ip', cost: 1 },
    ];
    // Equal slack (0): `shared` goes first because it can refund. B is denied by it before touching `plain`.
    const [a, b] = await Promise.all([chargeAll(request('a'), noRefundError), chargeAll(request('b'), noRefundError)]);
    expect([a.allowed, b.allowed]).toEqual([true, false]);
    expect(b.results.map((r) => r.state)).toEqual(['read', 'denied']);
    expect((await plain.peek('b')).remaining).toBe(1);
  });

  it('a store error after a charge refunds it, then rejects with that error', async () => {
    const ok = bucket(5);
    // A real Redis limiter whose server is not there: connection refused, no offline queue.
    const client = new Redis({
      port: await freePort(),
      host: '127.0.0.1',
      lazyConnect: true,
      enableOfflineQueue: false,
    });
    client.on('error', () => {});
    const failing = createRedisLimiter({ client, algorithm: gcra({ limit: 5, periodMs: 60_000 }), clock: 'client' });
    const charges: Charge[] = [
      { name: 'ok', limiter: ok, key: 'k', cost: 2 },
      { name: 'failing', limiter: failing, key: 'k', cost: 1 },
    ];
    try {
      await expect(chargeAll(charges, noRefundError)).rejects.toMatchObject({ code: 'ERR_SLUICE_STORE_UNAVAILABLE' });
      expect((await ok.peek('k')).remaining).toBe(5);
    } finally {
      client.disconnect();
    }
  });
});

import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, createMemoryLimiter, gcra } from '../../src/index.js';
import {
  AcquireTimeoutError,
  createAcquirer,
  createMemoryPauseStore,
  learnFromUpstream,
  QueueFullError,
  readUpstream,
  throttle,
  type UpstreamResponse,
} from '../../src/outbound/index.js';
import { counting, liveTimers } from './support/counting.js';

/** A real HTTP server answering each request with the status and headers named in its query. */
const server = createServer((request, response) => {
  const query = new URL(request.url ?? '/', 'http://x').searchParams;
  const headers = Object.fromEntries([...query].filter(([name]) => name !== 'status'));
  response.writeHead(Number(query.get('status') ?? 200), headers).end();
});
let base = '';
beforeAll(async () => {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});
afterAll(() => server.close());

const answer = (query: Record<string, string>) => fetch(`${base}?${new URLSearchParams(query)}`);
const tick = (ms = 20) => new Promise((resolve) => setTimeout(resolve, ms));
const TEN_YEARS_S = 315_360_000;
const epochSeconds = (year: number) => Math.floor(Date.UTC(year, 0, 1) / 1000);

/** Every way an upstream can ask for a pause of years, each on a real 429. */
const hostilePauses: Record<string, Record<string, string>> = {
  'numeric Retry-After': { 'Retry-After': String(TEN_YEARS_S) },
  'HTTP-date Retry-After, year 9999': { 'Retry-After': 'Fri, 31 Dec 9999 23:59:59 GMT' },
  'epoch X-RateLimit-Reset, year 5000': {
    'X-RateLimit-Remaining': '0',
    'X-RateLimit-Reset': String(epochSeconds(5000)),
  },
  'delta X-RateLimit-Reset': { 'X-RateLimit-Remaining': '0', 'X-RateLimit-Reset': String(TEN_YEARS_S) },
  'draft-11 RateLimit reset': { RateLimit: `"api";r=0;t=${TEN_YEARS_S}`, 'RateLimit-Policy': '"api";q=10;w=1' },
  'draft-7 RateLimit reset': { RateLimit: `limit=10, remaining=0, reset=${TEN_YEARS_S}` },
};

describe('one cap for every pause an upstream asks for', () => {
  for (const [form, headers] of Object.entries(hostilePauses)) {
    it(`a 429 with a ${form} pauses at most maxPauseMs (default 10 minutes), not years`, async () => {
      const acquirer = createAcquirer(createMemoryLimiter({ algorithm: gcra({ limit: 10, periodMs: 1000 }) }));
      const response = await answer({ status: '429', ...headers });
      expect(readUpstream(response, Date.now()).pauseMs).toBeGreaterThan(600_000);
      learnFromUpstream(acquirer, 'api', response);
      // Capped, a waiter ready to wait 10 min 1 s is queued, not refused at once as past a pause of years.
      const controller = new AbortController();
      const waiting = acquirer.acquire('api', { maxWaitMs: 601_000, signal: controller.signal }).catch((e) => e);
      await tick();
      controller.abort();
      expect(await waiting).toMatchObject({ name: 'AbortError' });
      const pausedMs = await acquirer.pauseOf('api');
      expect(pausedMs).toBeGreaterThan(590_000);
      expect(pausedMs).toBeLessThanOrEqual(600_000);
      acquirer.close();
    });
  }

  it('a pause of years raises no TimeoutOverflowWarning, and maxPauseMs is checked with ConfigError', async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.name);
    process.on('warning', onWarning);
    try {
      const acquirer = createAcquirer(createMemoryLimiter({ algorithm: gcra({ limit: 10, periodMs: 1000 }) }));
      acquirer.pause('idle', TEN_YEARS_S * 1000);
      learnFromUpstream(
        acquirer,
        'idle2',
        await answer({ status: '429', 'Retry-After': 'Fri, 31 Dec 9999 23:59:59 GMT' }),
      );
      await tick();
      expect(warnings).not.toContain('TimeoutOverflowWarning');
      acquirer.close();
    } finally {
      process.off('warning', onWarning);
    }
    const limiter = createMemoryLimiter({ algorithm: gcra({ limit: 10, periodMs: 1000 }) });
    for (const maxPauseMs of [0, -1, 1.5, 2 ** 31, Number.POSITIVE_INFINITY, '60000', null]) {
      expect(() => createAcquirer(limiter, { maxPauseMs: maxPauseMs as number })).toThrow(ConfigError);
      expect(() => createAcquirer(limiter, { maxPauseMs: maxPauseMs as number })).toThrow(/maxPauseMs/);
    }
    expect(createAcquirer(limiter, { maxPauseMs: 5000 }).maxPauseMs).toBe(5000);
  });

  it('resume lifts a pause: the waiter is admitted, and pauseOf reads 0', async () => {
    const pauses = createMemoryPauseStore();
    const limiter = createMemoryLimiter({ algorithm: gcra({ limit: 10, periodMs: 1000 }) });
    const [a, b] = [createAcquirer(limiter, { pauses }), createAcquirer(limiter, { pauses })] as const;
    learnFromUpstream(a, 'api', await answer({ status: '429', 'Retry-After': String(TEN_YEARS_S) }));
    await tick();
    expect(await b.pauseOf('api')).toBeGreaterThan(590_000);
    const waiting = a.acquire('api');
    await a.resume('api');
    await expect(waiting).resolves.toMatchObject({ allowed: true });
    expect(await a.pauseOf('api')).toBe(0);
    expect(await b.pauseOf('api')).toBe(0);
    a.close();
    b.close();
  });
});

describe('learned rates expire and are re-learned', () => {
  it('q=1;w=315360000 then q=100;w=1: the later response replaces the first, not 1 call per 10 years', async () => {
    const counted = counting(createMemoryLimiter({ algorithm: gcra({ limit: 10, periodMs: 1000 }) }));
    const acquirer = createAcquirer(counted.limiter);
    const call = throttle((query: Record<string, string>) => answer(query), {
      limiter: acquirer,
      key: 'api',
      response: (res) => res,
    });
    await call({ 'RateLimit-Policy': `"api";q=1;w=${TEN_YEARS_S}` });
    await call({ 'RateLimit-Policy': '"api";q=100;w=1' });
    const before = counted.charged;
    await call({});
    // 100/s announced against 10/s configured: the acquirer's own 1 unit per call again.
    expect(counted.charged - before).toBe(1);
    acquirer.close();
  });

  it('a learned rate holds maxPauseMs unless a response repeats it', async () => {
    let nowMs = 0;
    const counted = counting(createMemoryLimiter({ algorithm: gcra({ limit: 100, periodMs: 1000 }) }));
    const acquirer = createAcquirer(counted.limiter, { maxPauseMs: 60_000, clock: () => nowMs });
    acquirer.scale('api', 4);
    nowMs = 59_999;
    await acquirer.acquire('api');
    expect(counted.charged).toBe(4);
    nowMs = 60_000;
    await acquirer.acquire('api');
    expect(counted.charged).toBe(4 + 1);
    acquirer.close();
  });
});

describe('timers and bounds', () => {
  it('acquire({ maxWaitMs }) above 2^31 − 1 ms waits instead of timing out at once', async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.name);
    process.on('warning', onWarning);
    try {
      const acquirer = createAcquirer(createMemoryLimiter({ algorithm: gcra({ limit: 1, periodMs: 60_000 }) }));
      await acquirer.acquire('k');
      const controller = new AbortController();
      const outcome = acquirer.acquire('k', { maxWaitMs: 2 ** 32, signal: controller.signal }).catch((e) => e);
      let settled = false;
      void outcome.then(() => {
        settled = true;
      });
      await tick(50);
      expect(settled).toBe(false);
      controller.abort();
      expect(await outcome).toMatchObject({ name: 'AbortError' });
      expect(warnings).not.toContain('TimeoutOverflowWarning');
      acquirer.close();
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('a 429 with X-RateLimit-Remaining: 0 and an unreadable X-RateLimit-Reset pauses the documented 1 s', async () => {
    for (const reset of ['soon', '-5', '1e3', '99999999999999']) {
      const response = await answer({ status: '429', 'X-RateLimit-Remaining': '0', 'X-RateLimit-Reset': reset });
      expect(readUpstream(response, Date.now()).pauseMs).toBe(1000);
    }
  });

  it('maxWaiters bounds the waiters of all keys together (default 10,000) with QueueFullError', async () => {
    const acquirer = createAcquirer(createMemoryLimiter({ algorithm: gcra({ limit: 1, periodMs: 3_600_000 }) }));
    const keys = Array.from({ length: 11 }, (_, i) => `k${i}`);
    for (const key of keys) await acquirer.acquire(key);
    // 10 keys × 1,000 waiters (each key's maxQueueLength): the acquirer's 10,000.
    const waiting = keys
      .slice(0, 10)
      .flatMap((key) => Array.from({ length: 1000 }, () => acquirer.acquire(key).catch((e) => e)));
    await expect(acquirer.acquire('k10')).rejects.toBeInstanceOf(QueueFullError);
    await expect(acquirer.acquire('k10')).rejects.toThrow(/maxWaiters/);
    acquirer.close();
    await Promise.all(waiting);
    // Every waiter gone, the bound is free again.
    const small = createAcquirer(createMemoryLimiter({ algorithm: gcra({ limit: 1, periodMs: 3_600_000 }) }), {
      maxWaiters: 2,
    });
    const controller = new AbortController();
    await small.acquire('a');
    const two = [small.acquire('a', { signal: controller.signal }), small.acquire('b', { signal: controller.signal })];
    await expect(small.acquire('c')).rejects.toBeInstanceOf(QueueFullError);
    controller.abort();
    await Promise.allSettled(two);
    const third = small.acquire('d', { maxWaitMs: 10 });
    await expect(third).resolves.toMatchObject({ allowed: true });
    expect(() =>
      createAcquirer(createMemoryLimiter({ algorithm: gcra({ limit: 1, periodMs: 1 }) }), { maxWaiters: 0 }),
    ).toThrow(/maxWaiters/);
    small.close();
  });

  it('an abort storm of 5,000 waiters scans no queue per abort (linear work, not quadratic)', async () => {
    const counted = counting(createMemoryLimiter({ algorithm: gcra({ limit: 1, periodMs: 3_600_000 }) }));
    const acquirer = createAcquirer(counted.limiter, { maxQueueLength: 5000 });
    await acquirer.acquire('k');
    const timers = liveTimers();
    const controllers = Array.from({ length: 5000 }, () => new AbortController());
    const outcomes = controllers.map((controller) =>
      acquirer.acquire('k', { signal: controller.signal }).catch((e) => e),
    );
    // The head was denied and its wake-up timed: from here on only aborts touch the queue.
    for (let tries = 0; tries < 200 && counted.calls < 2; tries++) await tick(5);
    const shuffled = controllers.map((controller) => ({ controller, order: Math.random() }));
    shuffled.sort((x, y) => x.order - y.order);
    // Elements visited by the array methods a queue could scan with, counted during the storm.
    let visited = 0;
    const methods = ['indexOf', 'splice', 'filter', 'find', 'findIndex', 'slice', 'includes', 'shift'] as const;
    const originals = methods.map((name) => Array.prototype[name]);
    methods.forEach((name, i) => {
      const original = originals[i] as (...args: unknown[]) => unknown;
      (Array.prototype as unknown as Record<string, unknown>)[name] = function (this: unknown[], ...args: unknown[]) {
        visited += this.length;
        return original.apply(this, args);
      };
    });
    try {
      for (const { controller } of shuffled) controller.abort();
    } finally {
      methods.forEach((name, i) => {
        (Array.prototype as unknown as Record<string, unknown>)[name] = originals[i];
      });
    }
    // An array queue spliced per abort visits about n²/2 = 12.5 million entries.
    expect(visited).toBeLessThan(10 * 5000);
    expect((await Promise.all(outcomes)).every((error) => error.name === 'AbortError')).toBe(true);
    expect(acquirer.waiting('k')).toBe(0);
    expect(liveTimers()).toBeLessThanOrEqual(timers);
    acquirer.close();
  });
});

describe('throttle with a response mapper that omits headers', () => {
  it('keeps the call’s result, and a 429 still pauses the documented 1 s', async () => {
    const acquirer = createAcquirer(createMemoryLimiter({ algorithm: gcra({ limit: 10, periodMs: 1000 }) }));
    const call = throttle((query: Record<string, string>) => answer(query), {
      limiter: acquirer,
      key: 'api',
      response: (res) => ({ status: res.status }) as UpstreamResponse,
    });
    const res = await call({ status: '429' });
    expect(res.status).toBe(429);
    await expect(acquirer.acquire('api', { maxWaitMs: 500 })).rejects.toBeInstanceOf(AcquireTimeoutError);
    const pausedMs = await acquirer.pauseOf('api');
    expect(pausedMs).toBeGreaterThan(500);
    expect(pausedMs).toBeLessThanOrEqual(1000);
    // A mapper that throws is ignored as errorResponse's is: the result is the caller's.
    const throwing = throttle((query: Record<string, string>) => answer(query), {
      limiter: acquirer,
      key: 'other',
      response: () => {
        throw new Error('mapper bug');
      },
    });
    expect((await throwing({})).status).toBe(200);
    acquirer.close();
  });
});

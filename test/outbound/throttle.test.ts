import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryLimiter, gcra } from '../../src/index.js';
import { AcquireTimeoutError, createAcquirer, throttle } from '../../src/outbound/index.js';
import { counting } from './support/counting.js';

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

function throttledFetch() {
  const counted = counting(createMemoryLimiter({ algorithm: gcra({ limit: 20, periodMs: 1000 }) }));
  const acquirer = createAcquirer(counted.limiter);
  const call = throttle((query: string) => fetch(`${base}?${query}`), {
    limiter: acquirer,
    key: 'api',
    response: (res) => res,
  });
  return { counted, acquirer, call };
}

describe('throttle learning from real responses', () => {
  it('honours an announced rate lower than the limiter’s by charging more per call, never a higher one', async () => {
    const { counted, acquirer, call } = throttledFetch();
    await call(`RateLimit-Policy=${encodeURIComponent('"api";q=1000;w=1')}`);
    await call('');
    expect(counted.charged).toBe(2);
    // 5 per second announced against 20 configured: 20 ÷ (5 × 96 %) = 4.17, so 5 units per call
    // from now on (4/s: the margin left under a learned rate as under a configured one).
    await call(`RateLimit-Policy=${encodeURIComponent('"api";q=5;w=1')}`);
    await call('');
    expect(counted.charged).toBe(2 + 1 + 5);
    acquirer.close();
  });

  it('a served call announcing its rate and 0 remaining lowers the rate without pausing the key', async () => {
    const { counted, acquirer, call } = throttledFetch();
    const exhausted = `RateLimit=${encodeURIComponent('"api";r=0;t=2')}`;
    await call(`RateLimit-Policy=${encodeURIComponent('"api";q=5;w=1')}&${exhausted}`);
    // The learned rate (5 units per call) already spaces the calls: no 2 s pause on top.
    await expect(acquirer.acquire('api', { maxWaitMs: 1000 })).resolves.toMatchObject({ allowed: true });
    expect(counted.charged).toBe(1 + 5);
    // Exhausted without a rate, the reset is all there is to go by: the key pauses.
    await call(`X-RateLimit-Remaining=0&X-RateLimit-Reset=2`);
    const calls = counted.calls;
    await expect(acquirer.acquire('api', { maxWaitMs: 1000 })).rejects.toBeInstanceOf(AcquireTimeoutError);
    expect(counted.calls).toBe(calls);
    acquirer.close();
  });

  it('follows a higher announced rate only when opted in, never above the limiter’s own rate', async () => {
    const policy = (perSecond: number) => `RateLimit-Policy=${encodeURIComponent(`"api";q=${perSecond};w=1`)}`;
    const run = async (followHigherRates: boolean) => {
      // 100/s in the limiter, 10 units per call: 10 calls per second until the upstream says more.
      const counted = counting(createMemoryLimiter({ algorithm: gcra({ limit: 100, periodMs: 1000 }) }));
      const acquirer = createAcquirer(counted.limiter, { unitCost: 10, followHigherRates });
      const call = throttle((query: string) => fetch(`${base}?${query}`), {
        limiter: acquirer,
        key: 'api',
        response: (res) => res,
      });
      const charges: number[] = [];
      for (const query of [policy(20), '', policy(1000), '', policy(5), '']) {
        const before = counted.charged;
        await call(query);
        charges.push(counted.charged - before);
      }
      acquirer.close();
      return charges;
    };
    // Opted in, each less the 4 % margin: 20/s announced → 6 units per call (16.7/s); 1000/s → 1
    // (the limiter's 100/s is the ceiling); 5/s → 21 (4.76/s).
    expect(await run(true)).toEqual([10, 6, 6, 1, 1, 21]);
    // By default a higher announced rate is ignored; a lower one is honoured.
    expect(await run(false)).toEqual([10, 10, 10, 10, 10, 21]);
    expect(() =>
      createAcquirer(createMemoryLimiter({ algorithm: gcra({ limit: 5, periodMs: 1000 }) }), { unitCost: 6 }),
    ).toThrow(/unitCost/);
  });

  it('learns from a response attached to a thrown error (a client that throws on 429), then rethrows', async () => {
    class HttpError extends Error {
      constructor(readonly response: Response) {
        super(`HTTP ${response.status}`);
      }
    }
    // As axios or got do: a status of 400 or more throws, with the response on the error.
    const strictFetch = async (query: string) => {
      const res = await fetch(`${base}?${query}`);
      if (res.status >= 400) throw new HttpError(res);
      return res;
    };
    const counted = counting(createMemoryLimiter({ algorithm: gcra({ limit: 20, periodMs: 1000 }) }));
    const acquirer = createAcquirer(counted.limiter);
    const call = throttle(strictFetch, {
      limiter: acquirer,
      key: 'api',
      errorResponse: (error) => (error instanceof HttpError ? error.response : undefined),
    });
    const thrown = await call('status=429&Retry-After=30').catch((error: unknown) => error);
    expect(thrown).toBeInstanceOf(HttpError);
    const calls = counted.calls;
    await expect(acquirer.acquire('api', { maxWaitMs: 1000 })).rejects.toBeInstanceOf(AcquireTimeoutError);
    expect(counted.calls).toBe(calls);
    // An error the mapper does not recognise (or a mapper that throws) teaches nothing and is rethrown as is.
    const failing = throttle(
      async () => {
        throw new TypeError('network down');
      },
      {
        limiter: createAcquirer(createMemoryLimiter({ algorithm: gcra({ limit: 20, periodMs: 1000 }) })),
        key: 'api',
        errorResponse: () => {
          throw new Error('mapper bug');
        },
      },
    );
    await expect(failing()).rejects.toThrow('network down');
    acquirer.close();
  });

  it('a 429 with Retry-After pauses the key: a waiter that cannot wait that long is refused at once', async () => {
    const { counted, acquirer, call } = throttledFetch();
    const res = await call('status=429&Retry-After=30');
    expect(res.status).toBe(429);
    const calls = counted.calls;
    await expect(acquirer.acquire('api', { maxWaitMs: 1000 })).rejects.toBeInstanceOf(AcquireTimeoutError);
    expect(counted.calls).toBe(calls);
    // A malformed Retry-After is absent: a 429 then pauses for the default 1 s, not "forever".
    const other = throttledFetch();
    await other.call('status=429&Retry-After=soon');
    await expect(other.acquirer.acquire('api', { maxWaitMs: 5000 })).resolves.toMatchObject({ allowed: true });
    acquirer.close();
    other.acquirer.close();
  });
});

import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect, it } from 'vitest';
import { createConcurrencyLimiter, memoryHolds } from '../../src/concurrency/index.js';
import { createHttpLimiter, storageKeyOf, withRateLimit } from '../../src/http/index.js';
import { createMemoryLimiter, gcra, InvalidKeyError } from '../../src/index.js';

// An admin endpoint names a client's state with storageKeyOf, whatever the key's length:
// keys past the 512-byte limit are stored under a digest the caller never builds by hand.
it.each([
  ['a short key', 'user:42', 'per-key:id:user:42'],
  ['a key past 512 bytes', 'k'.repeat(600), /^per-key:id#[A-Za-z0-9_-]{43}$/],
])('storageKeyOf resets and blocks the state the middleware keeps for %s', async (_, apiKey, stored) => {
  const limiter = createMemoryLimiter({ algorithm: gcra({ limit: 1, periodMs: 60_000 }) });
  const rule = { name: 'per-key', limiter, key: () => apiKey };
  const http = createServer(withRateLimit({ limits: [rule] }, (_req, res) => res.end('ok')));
  http.listen(0, '127.0.0.1');
  await once(http, 'listening');
  const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/`;
  const status = async () => (await fetch(url)).status;
  try {
    const key = await storageKeyOf('per-key', apiKey);
    expect(key).toMatch(stored);
    expect([await status(), await status()]).toEqual([200, 429]);
    await limiter.reset(key);
    expect(await status()).toBe(200);
    await limiter.reset(key);
    await limiter.block?.(key, 60_000);
    expect(await status()).toBe(429);
  } finally {
    http.close();
  }
});

it('storageKeyOf rejects a key with a lone surrogate, as every store does', async () => {
  await expect(storageKeyOf('per-key', 'a\uD800')).rejects.toMatchObject({ code: 'ERR_SLUICE_INVALID_KEY' });
});

// A key function is user code reading attacker-shaped input (a JSON body, a parsed query): a
// number, object or boolean was coerced by String(), so every such request shared one bucket
// ('[object Object]', 'NaN') and one client could spend everyone's limit.
const NOT_STRINGS: [string, unknown][] = [
  ['a number', 42],
  ['NaN', Number.NaN],
  ['an object', { id: 'u1' }],
  ['an array', ['u1']],
  ['a boolean', false],
];

it.each(NOT_STRINGS)('storageKeyOf rejects %s with InvalidKeyError naming the limit', async (_, value) => {
  await expect(storageKeyOf('per-key', value as string)).rejects.toSatisfy(
    (error: Error) => error instanceof InvalidKeyError && error.message.includes("'per-key'"),
  );
});

it.each(NOT_STRINGS)(
  'a key function returning %s rejects the check (limit and in-flight cap): nothing charged',
  async (_, value) => {
    const limiter = createMemoryLimiter({ algorithm: gcra({ limit: 5, periodMs: 60_000 }) });
    const facts = { request: null, method: 'GET', path: '/', header: () => undefined, remoteAddress: '127.0.0.1' };
    const keyed = createHttpLimiter<null>({ limits: [{ name: 'per-user', limiter, key: () => value as string }] });
    await expect(keyed.check(facts)).rejects.toSatisfy(
      (error: Error) => error instanceof InvalidKeyError && error.message.includes("'per-user'"),
    );
    const reports = createConcurrencyLimiter({ limit: 1, holdMs: 60_000, store: memoryHolds() });
    const capped = createHttpLimiter<null>({
      limits: [{ name: 'per-ip', limiter: createMemoryLimiter({ algorithm: gcra({ limit: 5, periodMs: 60_000 }) }) }],
      inFlight: { name: 'reports', limiter: reports, key: () => value as string },
    });
    await expect(capped.check(facts)).rejects.toSatisfy(
      (error: Error) => error instanceof InvalidKeyError && error.message.includes("'reports'"),
    );
    expect(limiter.size).toBe(0);
  },
);

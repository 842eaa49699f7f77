import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect, it } from 'vitest';
import { storageKeyOf, withRateLimit } from '../../src/http/index.js';
import { createMemoryLimiter, gcra } from '../../src/index.js';

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

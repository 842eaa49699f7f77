import { Miniflare } from 'miniflare';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleForWeb } from './bundle.js';

// worker.ts, bundled from the built package, in Cloudflare's workerd (through miniflare) with no
// Node compatibility flag, answering real HTTP requests on a loopback port.
let miniflare: Miniflare;
let url: URL;
beforeAll(async () => {
  const script = await bundleForWeb("export { default } from './worker.ts';");
  miniflare = new Miniflare({ modules: true, script, compatibilityDate: '2026-04-01' });
  url = await miniflare.ready;
});
afterAll(() => miniflare?.dispose());

const get = async (clientIp: string) => {
  const response = await fetch(url, { headers: { 'cf-connecting-ip': clientIp } });
  await response.text();
  return response;
};

describe('a Hono app with a memory limiter in workerd', () => {
  it('admits the limit, then answers 429 with RateLimit headers', async () => {
    const responses = [];
    for (let i = 0; i < 4; i++) responses.push(await get('198.51.100.1'));
    expect(responses.map((r) => r.status)).toEqual([200, 200, 200, 429]);
    expect(responses[0]?.headers.get('ratelimit-policy')).toBe('"default";q=3;w=60');
    expect(responses[0]?.headers.get('ratelimit')).toBe('"default";r=2;t=20');
    const denied = responses[3];
    expect(denied?.headers.get('content-type')).toBe('application/problem+json');
    expect(denied?.headers.get('ratelimit')).toMatch(/^"default";r=0;t=\d+$/);
    expect(Number(denied?.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  });

  it('keys by CF-Connecting-IP: another client has its own budget', async () => {
    for (let i = 0; i < 3; i++) await get('198.51.100.2');
    expect((await get('198.51.100.2')).status).toBe(429);
    expect((await get('198.51.100.3')).status).toBe(200);
  });
});

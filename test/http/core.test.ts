import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { gcra } from '../../src/algorithms/gcra.js';
import { ConfigError } from '../../src/errors.js';
import { rateLimit as honoRateLimit } from '../../src/http/hono/index.js';
import {
  createHttpLimiter,
  type HttpLimitOptions,
  type RequestFacts,
  type SluiceWarning,
} from '../../src/http/index.js';
import { createMemoryLimiter } from '../../src/stores/memory/memory-limiter.js';

const limiterOf = (limit: number) =>
  createMemoryLimiter({ algorithm: gcra({ limit, periodMs: 60_000 }), clock: () => 1_000_000, pruneIntervalMs: 0 });

/** Request facts as an adapter would pass them, with the socket address injected. */
function facts(
  remoteAddress: string | undefined,
  headers: Record<string, string> = {},
  path = '/hello',
): RequestFacts<null> {
  return { request: null, method: 'GET', path, header: (name) => headers[name], remoteAddress };
}

describe('createHttpLimiter', () => {
  it('issue 6 with the literal proxy 10.0.0.1 (socket address injected): third request 429, keyed 203.0.113.5', async () => {
    const limiter = limiterOf(2);
    const http = createHttpLimiter({ limiter, trustProxy: '10.0.0.1' });
    const actions = [];
    for (const xff of ['198.51.100.7, 203.0.113.5', '198.51.100.8, 203.0.113.5', '198.51.100.9, 203.0.113.5']) {
      const verdict = await http.check(facts('10.0.0.1', { 'x-forwarded-for': xff }));
      actions.push(verdict.action === 'respond' ? verdict.response.status : 200);
    }
    expect(actions).toEqual([200, 200, 429]);
    expect((await limiter.peek('default:ip:203.0.113.5')).remaining).toBe(0);
    expect((await limiter.peek('default:ip:10.0.0.1')).remaining).toBe(2);
  });

  it.each<[string, HttpLimitOptions<null>]>([
    ['no limiter', {}],
    ['limiter and limits', { limiter: limiterOf(1), limits: [{ limiter: limiterOf(1) }] }],
    ['empty limits', { limits: [] }],
    ['duplicate names', { limits: [{ limiter: limiterOf(1) }, { limiter: limiterOf(1) }] }],
    ['a name with a colon', { limits: [{ name: 'a:b', limiter: limiterOf(1) }] }],
    ['not a limiter', { limits: [{ limiter: {} as never }] }],
    ['negative cost', { limits: [{ limiter: limiterOf(1), cost: -1 }] }],
    ['bad trustProxy', { limiter: limiterOf(1), trustProxy: '300.0.0.1' }],
    ['bad proxyHeader', { limiter: limiterOf(1), proxyHeader: 'x-real-ip' as never }],
    ['ipv6Prefix 65', { limiter: limiterOf(1), ipv6Prefix: 65 }],
    ['unknown draft', { limiter: limiterOf(1), headers: 'draft-99' as never }],
    ['bad legacyHeaders', { limiter: limiterOf(1), legacyHeaders: 'iso' as never }],
    ['bad failure', { limiter: limiterOf(1), failure: 'sideways' as never }],
    ['bad allowList', { limiter: limiterOf(1), allowList: ['nope'] }],
    ['route cost', { limiter: limiterOf(1), routes: { '/x': { cost: 1.5 } } }],
    ['route cost map', { limiter: limiterOf(1), routes: { '/x': { cost: { default: -2 } } } }],
    ['route failure mode', { limiter: limiterOf(1), routes: { '/x': { failure: 'maybe' as never } } }],
    ['route limit name clash', { limiter: limiterOf(1), routes: { '/x': { limits: [{ limiter: limiterOf(1) }] } } }],
    ['routeMatching not an object', { limiter: limiterOf(1), routeMatching: 'loose' as never }],
    ['routeMatching.strict not a boolean', { limiter: limiterOf(1), routeMatching: { strict: 'yes' as never } }],
  ])('rejects %s with ConfigError at construction', (_name, options) => {
    expect(() => createHttpLimiter(options)).toThrow(ConfigError);
  });

  it('the Hono adapter requires clientAddress', () => {
    expect(() => honoRateLimit({ limiter: limiterOf(1) } as never)).toThrow(ConfigError);
  });

  it('by default warns through process.emitWarning, once, with a code', async () => {
    const seen: Error[] = [];
    const listener = (warning: Error) => seen.push(warning);
    process.on('warning', listener);
    try {
      const http = createHttpLimiter({ limiter: limiterOf(10) });
      for (let i = 0; i < 3; i++) await http.check(facts('192.0.2.1', { 'x-forwarded-for': '203.0.113.5' }));
      await new Promise((resolve) => setImmediate(resolve)); // emitWarning delivers on the next tick
    } finally {
      process.off('warning', listener);
    }
    const ours = seen.filter((w) => w.name === 'SluiceWarning');
    expect(ours.map((w) => (w as Error & { code?: string }).code)).toEqual(['SLUICE_HTTP_FORWARDED_UNTRUSTED']);
  });

  it('warns once when every hop is trusted, and when there is no client address (keyed "unknown")', async () => {
    const warnings: SluiceWarning[] = [];
    const limiter = limiterOf(10);
    const http = createHttpLimiter({ limiter, trustProxy: true, onWarning: (w) => warnings.push(w) });
    await http.check(facts('10.0.0.1', { 'x-forwarded-for': '203.0.113.5' }));
    await http.check(facts('10.0.0.1', { 'x-forwarded-for': '203.0.113.6' }));
    await http.check(facts(undefined));
    await http.check(facts(undefined));
    expect(warnings.map((w) => w.code)).toEqual(['SLUICE_HTTP_TRUST_ALL', 'SLUICE_HTTP_NO_CLIENT_ADDRESS']);
    expect((await limiter.peek('default:ip:unknown')).remaining).toBe(8);
  });

  it('onWarning: false silences warnings', async () => {
    const http = createHttpLimiter({ limiter: limiterOf(10), onWarning: false });
    const seen: Error[] = [];
    const listener = (warning: Error) => seen.push(warning);
    process.on('warning', listener);
    try {
      await http.check(facts('192.0.2.1', { 'x-forwarded-for': '203.0.113.5' }));
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off('warning', listener);
    }
    expect(seen.filter((w) => w.name === 'SluiceWarning')).toEqual([]);
  });

  it('key namespaces: an identity equal to an IP, or to "unknown", never drains the IP or no-address bucket', async () => {
    const limiter = limiterOf(2);
    const http = createHttpLimiter<null>({
      limits: [{ limiter, key: (r) => r.header('x-api-key') }],
      onWarning: false,
    });
    const status = async (verdict: Promise<Awaited<ReturnType<typeof http.check>>>) => {
      const settled = await verdict;
      return settled.action === 'respond' ? settled.response.status : 200;
    };
    const forged = [];
    for (let i = 0; i < 3; i++)
      forged.push(await status(http.check(facts('198.51.100.1', { 'x-api-key': '203.0.113.5' }))));
    expect(forged).toEqual([200, 200, 429]);
    expect(await status(http.check(facts('203.0.113.5')))).toBe(200);
    for (let i = 0; i < 3; i++) await http.check(facts('198.51.100.2', { 'x-api-key': 'unknown' }));
    expect(await status(http.check(facts(undefined)))).toBe(200);
    expect((await limiter.peek('default:id:203.0.113.5')).remaining).toBe(0);
    expect((await limiter.peek('default:ip:203.0.113.5')).remaining).toBe(1);
    expect((await limiter.peek('default:ip:unknown')).remaining).toBe(1);
  });

  it('key namespaces: an identity shaped like a hashed key does not share the hashed bucket', async () => {
    const limiter = limiterOf(2);
    const http = createHttpLimiter<null>({
      limits: [{ limiter, key: (r) => r.header('x-api-key') }],
      onWarning: false,
    });
    const huge = 'k'.repeat(600);
    const { createHash } = await import('node:crypto');
    const digest = createHash('sha256').update(huge).digest('base64url');
    for (let i = 0; i < 2; i++) await http.check(facts('198.51.100.1', { 'x-api-key': `#${digest}` }));
    const verdict = await http.check(facts('198.51.100.2', { 'x-api-key': huge }));
    expect(verdict.action).toBe('continue');
  });

  it('identity keys: undefined falls back to the IP key; keys over 512 bytes become a stable SHA-256', async () => {
    const limiter = limiterOf(10);
    const http = createHttpLimiter<null>({
      limits: [{ limiter, key: (r) => r.header('x-api-key') }],
    });
    await http.check(facts('192.0.2.1'));
    expect((await limiter.peek('default:ip:192.0.2.1')).remaining).toBe(9);
    const huge = 'k'.repeat(600);
    await http.check(facts('192.0.2.1', { 'x-api-key': huge }));
    await http.check(facts('192.0.2.2', { 'x-api-key': huge }));
    const { createHash } = await import('node:crypto');
    const hashed = `default:id#${createHash('sha256').update(huge).digest('base64url')}`;
    expect((await limiter.peek(hashed)).remaining).toBe(8);
  });

  it('a respond hook replaces the default 429 and sees the outcome', async () => {
    const http = createHttpLimiter({
      limiter: limiterOf(1),
      respond: (outcome) => ({
        status: outcome.status,
        headers: [...outcome.headers, ['Content-Type', 'text/plain']],
        body: `slow down: ${outcome.problem.retryAfter}`,
      }),
    });
    await http.check(facts('192.0.2.1'));
    const verdict = await http.check(facts('192.0.2.1'));
    expect(verdict).toEqual({
      action: 'respond',
      response: {
        status: 429,
        headers: [
          ['RateLimit-Policy', '"default";q=1;w=60'],
          ['RateLimit', '"default";r=0;t=60'],
          ['Retry-After', '60'],
          ['Content-Type', 'text/plain'],
        ],
        body: 'slow down: 60',
      },
    });
  });

  it('errors of user functions reject (the adapter hands them to the framework)', async () => {
    const http = createHttpLimiter<null>({
      limits: [
        {
          limiter: limiterOf(1),
          key: () => {
            throw new Error('key function bug');
          },
        },
      ],
    });
    await expect(http.check(facts('192.0.2.1'))).rejects.toThrow('key function bug');
  });

  it('headerLimits "closest" lists only the limit closest to denial', async () => {
    const http = createHttpLimiter({
      limits: [
        { name: 'wide', limiter: limiterOf(100) },
        { name: 'narrow', limiter: limiterOf(3) },
      ],
      headerLimits: 'closest',
    });
    const verdict = await http.check(facts('192.0.2.1'));
    expect(verdict).toEqual({
      action: 'continue',
      headers: [
        ['RateLimit-Policy', '"narrow";q=3;w=60'],
        ['RateLimit', '"narrow";r=2;t=20'],
      ],
    });
  });

  it('fuzz: arbitrary forwarding headers and socket strings never throw and always give the same key', async () => {
    const text = fc.oneof(
      fc.string({ maxLength: 300 }),
      fc
        .array(fc.oneof(fc.ipV4(), fc.ipV6(), fc.constantFrom('unknown', '_x', '[', ']', '::ffff:1.2.3.4', ' ', '')), {
          maxLength: 20,
        })
        .map((hops) => hops.join(', ')),
      fc.ipV6().map((ip) => `"[${ip}]:80"`),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.option(fc.oneof(fc.ipV4(), fc.ipV6(), fc.string({ maxLength: 40 })), { nil: undefined }),
        text,
        text,
        fc.constantFrom<HttpLimitOptions<null>['trustProxy']>(false, true, 'loopback', 2, '10.0.0.0/8'),
        fc.constantFrom('x-forwarded-for' as const, 'forwarded' as const),
        async (socket, xff, forwarded, trustProxy, proxyHeader) => {
          const keys: string[] = [];
          const http = createHttpLimiter<null>({
            limiter: limiterOf(1000),
            trustProxy,
            proxyHeader,
            onWarning: false,
            skip: (r) => {
              keys.push(r.ipKey);
              return false;
            },
          });
          const request = facts(socket, { 'x-forwarded-for': xff, forwarded });
          const first = await http.check(request);
          const second = await http.check(request);
          expect(first.action).toBe('continue');
          expect(second.action).toBe('continue');
          expect(keys[0]).toBe(keys[1]);
          expect(typeof keys[0]).toBe('string');
        },
      ),
      { numRuns: 500 },
    );
  });
});

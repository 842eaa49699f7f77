import fc from 'fast-check';
import ipaddr from 'ipaddr.js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { gcra } from '../../src/algorithms/gcra.js';
import { StoreUnavailableError } from '../../src/errors.js';
import { canonicalIpv4Key } from '../../src/http/client-ip.js';
import { createHttpLimiter, type HttpLimitOptions, ipKey, type RequestFacts } from '../../src/http/index.js';
import type { Limiter } from '../../src/limiter.js';
import { createMemoryLimiter } from '../../src/stores/memory/memory-limiter.js';

const limiterOf = (limit: number) =>
  createMemoryLimiter({ algorithm: gcra({ limit, periodMs: 60_000 }), clock: () => 1_000_000, pruneIntervalMs: 0 });

function facts(remoteAddress: string | undefined, headers: Record<string, string> = {}): RequestFacts<null> {
  return { request: null, method: 'GET', path: '/hello', header: (name) => headers[name], remoteAddress };
}

describe('canonicalIpv4Key: the IPv4 fast path answers only as ipKey does', () => {
  it.each([
    ['203.0.113.7', '203.0.113.7'],
    ['0.0.0.0', '0.0.0.0'],
    ['255.255.255.255', '255.255.255.255'],
    ['::ffff:127.0.0.1', '127.0.0.1'],
  ])('%s → %s', (raw, key) => {
    expect(canonicalIpv4Key(raw)).toBe(key);
    expect(ipKey(raw)).toBe(key);
  });

  it.each([
    '256.0.0.1',
    '1.2.3.256',
    '01.2.3.4',
    '1.2.3.04',
    '1.2.3',
    '1.2.3.4.5',
    ' 1.2.3.4',
    '1.2.3.4 ',
    '1.2.3.4\n',
    '1.2.3.4:80',
    '[1.2.3.4]',
    '::FFFF:1.2.3.4',
    '::ffff:01.2.3.4',
    '::ffff:::1.2.3.4',
    '0x7f.0.0.1',
    '1111.2.3.4',
    '١.2.3.4',
    '1.2.3.4%eth0',
    '',
  ])('%j is left to the full parser', (raw) => {
    expect(canonicalIpv4Key(raw)).toBeUndefined();
  });

  it('whenever it answers, ipKey gives the same key (attacker-shaped strings)', () => {
    const octet = fc.oneof(fc.integer({ min: 0, max: 999 }).map(String), fc.constantFrom('00', '01', '0x1', '', ' 1'));
    const dotted = fc.array(octet, { minLength: 1, maxLength: 6 }).map((parts) => parts.join('.'));
    const raw = fc.oneof(
      dotted,
      dotted.map((text) => `::ffff:${text}`),
      dotted.map((text) => `${text}:80`),
      fc.string({ maxLength: 24 }),
    );
    fc.assert(
      fc.property(raw, (text) => {
        const fast = canonicalIpv4Key(text);
        if (fast !== undefined) expect(fast).toBe(ipKey(text));
        else if (/^(::ffff:)?\d{1,3}(\.\d{1,3}){3}$/.test(text) && ipKey(text) === text.replace('::ffff:', '')) {
          throw new Error(`a canonical address missed the fast path: ${text}`);
        }
      }),
      { numRuns: 5000 },
    );
  });
});

describe('createHttpLimiter decide: the synchronous path', () => {
  it('a memory limit keyed by IP decides without a Promise, as the awaited path does, down to the 429', async () => {
    const http = createHttpLimiter({ limiter: limiterOf(2), legacyHeaders: true });
    const awaited = createHttpLimiter({ limiter: limiterOf(2), legacyHeaders: true });
    for (let i = 0; i < 3; i++) {
      const verdict = http.decide(facts('::ffff:203.0.113.7'));
      expect(verdict).not.toBeInstanceOf(Promise);
      expect(verdict).toEqual(await awaited.check(facts('203.0.113.7'), { cost: (_info) => 1 }));
    }
  });

  it.each([
    ['draft-11', false],
    ['draft-7', 'delta'],
    ['draft-6', 'epoch'],
    [false, true],
  ] as const)("headers %s with legacy %s are the awaited path's, allowed and denied", async (headers, legacy) => {
    const options = { headers, legacyHeaders: legacy, epochClock: () => 1_700_000_000_123 };
    const http = createHttpLimiter({ limits: { name: 'per-"ip"', limiter: limiterOf(2) }, ...options });
    const awaited = createHttpLimiter({ limits: { name: 'per-"ip"', limiter: limiterOf(2) }, ...options });
    for (let i = 0; i < 3; i++) {
      const verdict = http.decide(facts('203.0.113.7'));
      expect(verdict).not.toBeInstanceOf(Promise);
      expect(verdict).toEqual(await awaited.check(facts('203.0.113.7'), { cost: (_info) => 1 }));
    }
  });

  it('a route with params writes the window of the algorithm its params make', async () => {
    const limiter = limiterOf(2);
    const params = { limit: 10, periodMs: 7_200_000 };
    const http = createHttpLimiter({ limits: { name: 'p', limiter, params } });
    const verdict = http.decide(facts('203.0.113.7'));
    expect(verdict).not.toBeInstanceOf(Promise);
    expect((verdict as { headers: unknown }).headers).toEqual([
      ['RateLimit-Policy', '"p";q=10;w=7200'],
      ['RateLimit', '"p";r=9;t=720'],
    ]);
  });

  it('IPv6 and unreadable addresses keep their keys on the synchronous path', () => {
    const limiter = limiterOf(5);
    const http = createHttpLimiter({ limiter, onWarning: false });
    expect(http.decide(facts('2001:db8:abcd:1234::1'))).not.toBeInstanceOf(Promise);
    expect(http.decide(facts(undefined))).not.toBeInstanceOf(Promise);
    expect(limiter.peekSync('default:ip:2001:db8:abcd:1200::/56').remaining).toBe(4);
    expect(limiter.peekSync('default:ip:unknown').remaining).toBe(4);
  });

  it('the untrusted-forwarding warning still fires on the synchronous path', () => {
    const codes: string[] = [];
    const http = createHttpLimiter({ limiter: limiterOf(5), onWarning: (warning) => codes.push(warning.code) });
    void http.decide(facts('203.0.113.7', { 'x-forwarded-for': '198.51.100.1' }));
    expect(codes).toContain('SLUICE_HTTP_FORWARDED_UNTRUSTED');
  });

  it.each<[string, HttpLimitOptions<null>]>([
    ['a key function', { limits: { name: 'k', limiter: limiterOf(5), key: () => 'user' } }],
    ['a cost function', { limits: { name: 'c', limiter: limiterOf(5), cost: () => 1 } }],
    ['a skip function', { limiter: limiterOf(5), skip: () => false }],
    ['a respond function', { limiter: limiterOf(5), respond: () => ({ status: 429, headers: [], body: '' }) }],
    [
      'two limits',
      {
        limits: [
          { name: 'a', limiter: limiterOf(5) },
          { name: 'b', limiter: limiterOf(5) },
        ],
      },
    ],
  ])('%s takes the awaited path, with the same verdict', async (_name, options) => {
    const verdict = createHttpLimiter(options).decide(facts('203.0.113.7'));
    expect(verdict).toBeInstanceOf(Promise);
    expect((await verdict).action).toBe('continue');
  });

  it('trusted proxies decide synchronously too, keyed by the forwarded client', () => {
    const limiter = limiterOf(5);
    const http = createHttpLimiter({ limiter, trustProxy: '10.0.0.1' });
    expect(http.decide(facts('10.0.0.1', { 'x-forwarded-for': '203.0.113.7' }))).not.toBeInstanceOf(Promise);
    expect(limiter.peekSync('default:ip:203.0.113.7').remaining).toBe(4);
  });

  it('a synchronous limiter that throws: decide rejects, as check does, and never throws', async () => {
    const inner = limiterOf(5);
    const throwing = Object.assign(Object.create(inner), {
      limitSync: () => {
        throw new Error('boom');
      },
    });
    const verdict = createHttpLimiter({ limiter: throwing }).decide(facts('203.0.113.7'));
    expect(verdict).toBeInstanceOf(Promise);
    await expect(verdict).rejects.toThrow('boom');
  });

  it('a memory limit is decided by limitSync alone: the awaited limit is never called', () => {
    const inner = limiterOf(1000);
    let awaitedCalls = 0;
    const counting = Object.assign(Object.create(inner), {
      limit: (...args: Parameters<typeof inner.limit>) => {
        awaitedCalls++;
        return inner.limit(...args);
      },
    });
    const http = createHttpLimiter({ limiter: counting, trustProxy: 'loopback' });
    for (let i = 0; i < 100; i++) {
      expect(http.decide(facts('127.0.0.1', { 'x-forwarded-for': `10.0.0.${i}` }))).not.toBeInstanceOf(Promise);
    }
    expect(awaitedCalls).toBe(0);
    expect(inner.peekSync('default:ip:10.0.0.7').remaining).toBe(999);
  });
});

describe('denials on the synchronous path', () => {
  afterEach(() => vi.restoreAllMocks());

  it('build the problem+json body once per wait in seconds, not once per request', () => {
    const http = createHttpLimiter({ limiter: limiterOf(1) });
    expect(http.decide(facts('203.0.113.7'))).toMatchObject({ action: 'continue' });
    const stringify = vi.spyOn(JSON, 'stringify');
    const bodies = new Set<string>();
    for (let i = 0; i < 100; i++) {
      const verdict = http.decide(facts('203.0.113.7'));
      if (verdict instanceof Promise || verdict.action !== 'respond') throw new Error('expected a synchronous 429');
      bodies.add(verdict.response.body);
    }
    expect(stringify).toHaveBeenCalledTimes(1);
    expect(bodies.size).toBe(1);
  });

  it("follow the wait as it shrinks, with the general path's headers and body", async () => {
    let nowMs = 1_000_000;
    const limiterAt = () =>
      createMemoryLimiter({ algorithm: gcra({ limit: 1, periodMs: 60_000 }), clock: () => nowMs, pruneIntervalMs: 0 });
    const http = createHttpLimiter({ limiter: limiterAt(), legacyHeaders: true });
    const general = createHttpLimiter({ limiter: limiterAt(), legacyHeaders: true });
    const retryAfters = new Set<string | undefined>();
    for (let i = 0; i < 6; i++) {
      const verdict = http.decide(facts('203.0.113.7'));
      expect(verdict).toEqual(await general.check(facts('203.0.113.7'), { cost: (_info) => 1 }));
      if (!(verdict instanceof Promise) && verdict.action === 'respond') {
        retryAfters.add(verdict.response.headers.find(([name]) => name === 'Retry-After')?.[1]);
      }
      nowMs += 7_000;
    }
    expect([...retryAfters]).toEqual(['53', '46', '39', '32', '25']);
  });
});

describe('the client key behind a trusted proxy', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('dotted quads on the socket and in X-Forwarded-For are keyed without an ipaddr.js parse', () => {
    const parses = [
      vi.spyOn(ipaddr.IPv4, 'parse'),
      vi.spyOn(ipaddr.IPv6, 'parse'),
      vi.spyOn(ipaddr.IPv4, 'isValidFourPartDecimal'),
    ];
    const limiter = limiterOf(5);
    const http = createHttpLimiter({ limiter, trustProxy: '10.0.0.1' });
    for (let i = 0; i < 100; i++)
      void http.decide(facts('10.0.0.1', { 'x-forwarded-for': `198.51.100.9, 203.0.113.${i}` }));
    expect(parses.map((spy) => spy.mock.calls.length)).toEqual([0, 0, 0]);
    expect(limiter.peekSync('default:ip:203.0.113.7').remaining).toBe(4);
    void http.decide(facts('10.0.0.1', { 'x-forwarded-for': '2001:db8::1' }));
    expect(parses[1]?.mock.calls.length).toBe(1); // anything else still goes through the full parser
  });
});

describe('one IP-keyed limit on an async-only limiter (Redis)', () => {
  const asyncOnly = (limit: Limiter['limit']): Limiter => {
    const inner = limiterOf(2);
    return {
      algorithm: inner.algorithm,
      limit,
      peek: (key, options) => inner.peek(key, options),
      reset: (key) => inner.reset(key),
      close: () => inner.close(),
    };
  };

  it("is decided by one limit call, with the general path's verdicts down to the 429", async () => {
    const inner = limiterOf(2);
    let calls = 0;
    const limiter = asyncOnly((key, options) => {
      calls++;
      return inner.limit(key, options);
    });
    const http = createHttpLimiter({ limiter, legacyHeaders: true });
    const general = createHttpLimiter({ limiter: limiterOf(2), legacyHeaders: true });
    for (let i = 0; i < 3; i++) {
      expect(await http.decide(facts('203.0.113.7'))).toEqual(
        await general.check(facts('203.0.113.7'), { cost: (_info) => 1 }),
      );
    }
    expect(calls).toBe(3);
    expect(inner.peekSync('default:ip:203.0.113.7').remaining).toBe(0);
  });

  it.each([
    ['closed', 'respond'],
    ['open', 'continue'],
  ] as const)('a store failure fails %s, telling onStoreError the request', async (failure, action) => {
    const seen: (string | undefined)[] = [];
    const limiter = asyncOnly(() => Promise.reject(new StoreUnavailableError('down')));
    const http = createHttpLimiter({
      limiter,
      failure,
      onWarning: false,
      onStoreError: (_error, info) => seen.push(info.ipKey),
    });
    const verdict = await http.decide(facts('203.0.113.7'));
    expect(verdict.action).toBe(action);
    if (verdict.action === 'respond') expect(verdict.response.status).toBe(503);
    expect(seen).toEqual(['203.0.113.7']);
  });

  it('any other error rejects, as on the general path', async () => {
    const limiter = asyncOnly(() => Promise.reject(new Error('bug')));
    await expect(createHttpLimiter({ limiter }).decide(facts('203.0.113.7'))).rejects.toThrow('bug');
  });
});

import { describe, expect, it } from 'vitest';
import {
  draft6Headers,
  draft7Headers,
  draft11Headers,
  type HeaderPair,
  type LimitReport,
  legacyHeaders,
  parseRateLimitHeaders,
  parseRetryAfter,
  retryAfterHeader,
} from '../../src/http/headers.js';
import { readUpstream } from '../../src/outbound/index.js';

const reader = (pairs: readonly HeaderPair[]) => {
  const map = new Map(pairs.map(([name, value]) => [name.toLowerCase(), value]));
  return (name: string) => map.get(name);
};
const report: LimitReport = {
  name: 'per-key',
  quota: 10,
  windowSeconds: 60,
  remaining: 7,
  resetSeconds: 6,
  resetAfterMs: 5500,
};
const NOW = Date.UTC(2026, 0, 1);

describe('parsing what the header writers write', () => {
  it('reads draft-11 back, every named limit', () => {
    const other = { ...report, name: 'per-ip, "quoted"', quota: 3, remaining: 0, resetSeconds: 20 };
    expect(parseRateLimitHeaders(reader(draft11Headers([report, other])), NOW)).toEqual([
      { name: 'per-key', quota: 10, windowSeconds: 60, remaining: 7, resetSeconds: 6 },
      { name: 'per-ip, "quoted"', quota: 3, windowSeconds: 60, remaining: 0, resetSeconds: 20 },
    ]);
  });

  it('reads draft-7, draft-6 and X-RateLimit-* (delta and epoch) back', () => {
    const single = { quota: 10, windowSeconds: 60, remaining: 7, resetSeconds: 6 };
    expect(parseRateLimitHeaders(reader(draft7Headers(report)), NOW)).toEqual([single]);
    expect(parseRateLimitHeaders(reader(draft6Headers(report)), NOW)).toEqual([single]);
    expect(parseRateLimitHeaders(reader(legacyHeaders(report, 'delta', NOW)), NOW)).toEqual([
      { quota: 10, remaining: 7, resetSeconds: 6 },
    ]);
    expect(parseRateLimitHeaders(reader(legacyHeaders(report, 'epoch', NOW)), NOW)).toEqual([
      { quota: 10, remaining: 7, resetSeconds: 6 },
    ]);
  });

  it('reads Retry-After as delta seconds or an HTTP-date', () => {
    expect(parseRetryAfter(retryAfterHeader(2500)[1], NOW)).toBe(3000);
    expect(parseRetryAfter(new Date(NOW + 4000).toUTCString(), NOW)).toBe(4000);
    expect(parseRetryAfter(new Date(NOW - 4000).toUTCString(), NOW)).toBe(0);
  });

  it('treats malformed values as absent', () => {
    for (const value of ['-1', '1.5', 'soon', '', ' ', '9'.repeat(20), 'Mon, 99 Foo 2026 00:00:00 GMT']) {
      expect(parseRetryAfter(value, NOW)).toBeUndefined();
    }
    const bad = [
      ['RateLimit-Policy', '"a";q=-1;w=60, "b";q=10;w=0, "c";q=ten;w=60'],
      ['RateLimit', '"a";r=1;t=2'],
    ] as const;
    expect(parseRateLimitHeaders(reader(bad), NOW)).toEqual([
      { name: 'a', windowSeconds: 60, remaining: 1, resetSeconds: 2 },
      { name: 'b', quota: 10 },
      { name: 'c', windowSeconds: 60 },
    ]);
    for (const policy of ['"unterminated;q=1', '"a";q=1,', '"a";q=1;;', 'x'.repeat(2000)]) {
      expect(parseRateLimitHeaders(reader([['RateLimit-Policy', policy]]), NOW)).toEqual([]);
    }
    expect(parseRateLimitHeaders(reader([['X-RateLimit-Limit', '0x10']]), NOW)).toEqual([]);
  });
});

describe('readUpstream', () => {
  it('pauses for Retry-After on a 429, for the reset of an exhausted limit otherwise, and reads the rate', () => {
    const pairs = [...draft11Headers([{ ...report, remaining: 0 }]), retryAfterHeader(2000)];
    const headers = new Headers(pairs.map(([name, value]) => [name, value]));
    expect(readUpstream({ status: 429, headers }, NOW)).toEqual({ pauseMs: 2000, ratePerMs: 10 / 60_000 });
    expect(readUpstream({ status: 200, headers }, NOW)).toEqual({ pauseMs: 6000, ratePerMs: 10 / 60_000 });
    expect(readUpstream({ status: 429, headers: {} }, NOW)).toEqual({ pauseMs: 1000, ratePerMs: undefined });
    // Node's IncomingHttpHeaders: a repeated header (an array) is ambiguous, so absent.
    expect(readUpstream({ status: 200, headers: { 'x-ratelimit-remaining': ['0', '1'] } }, NOW).pauseMs).toBe(0);
  });
});

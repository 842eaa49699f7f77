import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import {
  checkPolicyName,
  draft6Headers,
  draft7Headers,
  draft11Headers,
  type LimitReport,
  legacyHeaders,
  RATELIMIT_DRAFTS,
  retryAfterHeader,
} from '../../src/http/headers.js';

const perIp: LimitReport = {
  name: 'per-ip',
  quota: 10,
  windowSeconds: 60,
  remaining: 7,
  resetSeconds: 18,
  resetAfterMs: 17_200,
};
const perKey: LimitReport = {
  name: 'per-key',
  quota: 3,
  windowSeconds: 60,
  remaining: 0,
  resetSeconds: 60,
  resetAfterMs: 60_000,
};

describe('header writers', () => {
  it('lists the drafts newest first in one tuple', () => {
    expect(RATELIMIT_DRAFTS).toEqual(['draft-11', 'draft-7', 'draft-6']);
  });

  it('draft-11 lists every limit as structured-field items', () => {
    expect(draft11Headers([perIp, perKey])).toEqual([
      ['RateLimit-Policy', '"per-ip";q=10;w=60, "per-key";q=3;w=60'],
      ['RateLimit', '"per-ip";r=7;t=18, "per-key";r=0;t=60'],
    ]);
    expect(draft11Headers([])).toEqual([]);
  });

  it('draft-11 escapes quotes and backslashes in names', () => {
    expect(draft11Headers([{ ...perIp, name: 'a"b\\c' }])[1]).toEqual(['RateLimit', '"a\\"b\\\\c";r=7;t=18']);
  });

  it('a reset of 0 is written as 0, not dropped', () => {
    const fresh = { ...perIp, remaining: 10, resetSeconds: 0, resetAfterMs: 0 };
    expect(draft11Headers([fresh])[1]).toEqual(['RateLimit', '"per-ip";r=10;t=0']);
    expect(draft7Headers(fresh)[1]).toEqual(['RateLimit', 'limit=10, remaining=10, reset=0']);
    expect(draft6Headers(fresh)).toContainEqual(['RateLimit-Reset', '0']);
    expect(legacyHeaders(fresh, 'delta', 0)).toContainEqual(['X-RateLimit-Reset', '0']);
  });

  it('draft-7 and draft-6 describe one limit', () => {
    expect(draft7Headers(perKey)).toEqual([
      ['RateLimit-Policy', '3;w=60'],
      ['RateLimit', 'limit=3, remaining=0, reset=60'],
    ]);
    expect(draft6Headers(perKey)).toEqual([
      ['RateLimit-Policy', '3;w=60'],
      ['RateLimit-Limit', '3'],
      ['RateLimit-Remaining', '0'],
      ['RateLimit-Reset', '60'],
    ]);
  });

  it('legacy X-RateLimit-Reset is delta seconds, or the epoch second computed from the decision', () => {
    expect(legacyHeaders(perIp, 'delta', 1_700_000_000_500)).toEqual([
      ['X-RateLimit-Limit', '10'],
      ['X-RateLimit-Remaining', '7'],
      ['X-RateLimit-Reset', '18'],
    ]);
    // 1_700_000_000_500 + 17_200 = 1_700_000_017_700 → second 1_700_000_018 (rounded up)
    expect(legacyHeaders(perIp, 'epoch', 1_700_000_000_500)[2]).toEqual(['X-RateLimit-Reset', '1700000018']);
  });

  it('Retry-After is whole seconds rounded up, never 0, never more than needed', () => {
    expect(retryAfterHeader(1)).toEqual(['Retry-After', '1']);
    expect(retryAfterHeader(999)).toEqual(['Retry-After', '1']);
    expect(retryAfterHeader(1000)).toEqual(['Retry-After', '1']);
    expect(retryAfterHeader(1001)).toEqual(['Retry-After', '2']);
    expect(retryAfterHeader(5000)).toEqual(['Retry-After', '5']);
    expect(retryAfterHeader(0)).toEqual(['Retry-After', '1']);
    expect(retryAfterHeader(60_000)).toEqual(['Retry-After', '60']);
  });

  it('policy names must be printable ASCII without ":"', () => {
    expect(checkPolicyName('per-ip')).toBe('per-ip');
    for (const bad of ['', 'a:b', 'é', 'x'.repeat(65), 'tab\there', 42, undefined]) {
      expect(() => checkPolicyName(bad)).toThrow(ConfigError);
    }
  });
});

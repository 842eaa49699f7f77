import { describe, expect, it, vi } from 'vitest';
import { gcra } from '../../src/algorithms/gcra.js';
import { ConfigError, isSluiceError, StoreUnavailableError } from '../../src/index.js';
import type { Limiter } from '../../src/limiter.js';
import { withFailurePolicy } from '../../src/policy/index.js';

/**
 * A second, independent copy of Sluice's error classes, as when one dependency `import`s the
 * ESM build and another `require`s the CommonJS build (the packed-tarball check in
 * scripts/check-consumers.mjs does the same with the real builds).
 */
async function otherCopy(): Promise<typeof import('../../src/errors.js')> {
  vi.resetModules();
  return import('../../src/errors.js');
}

function failingLimiter(error: unknown): Limiter {
  return {
    algorithm: gcra({ limit: 5, periodMs: 1000 }),
    limit: () => Promise.reject(error),
    peek: () => Promise.reject(error),
    reset: () => Promise.reject(error),
    close: async () => {},
  };
}

describe('errors across two copies of Sluice (ESM and CommonJS in one process)', () => {
  it('the other copy really has other classes (instanceof fails across them)', async () => {
    const other = await otherCopy();
    expect(other.StoreUnavailableError).not.toBe(StoreUnavailableError);
    expect(new other.StoreUnavailableError('down')).not.toBeInstanceOf(StoreUnavailableError);
  });

  it('isSluiceError recognises an error of the other copy, by code when given one', async () => {
    const other = await otherCopy();
    const error = new other.StoreUnavailableError('down');
    expect(isSluiceError(error)).toBe(true);
    expect(isSluiceError(error, 'ERR_SLUICE_STORE_UNAVAILABLE')).toBe(true);
    expect(isSluiceError(error, 'ERR_SLUICE_CONFIG')).toBe(false);
    expect(isSluiceError(new other.ConfigError('bad'), 'ERR_SLUICE_CONFIG')).toBe(true);
  });

  it('isSluiceError rejects look-alikes: a plain error with a Sluice code is not branded', () => {
    const fake = Object.assign(new Error('x'), { code: 'ERR_SLUICE_STORE_UNAVAILABLE' });
    expect(isSluiceError(fake)).toBe(false);
    expect(isSluiceError(undefined)).toBe(false);
    expect(isSluiceError('ERR_SLUICE_CONFIG')).toBe(false);
    expect(isSluiceError(new ConfigError('bad'), 'ERR_SLUICE_CONFIG')).toBe(true);
  });

  it('withFailurePolicy degrades a StoreUnavailableError thrown by the other copy instead of rejecting', async () => {
    const other = await otherCopy();
    const store = failingLimiter(
      new other.StoreUnavailableError('connect ECONNREFUSED', new Error('connect ECONNREFUSED 127.0.0.1:1')),
    );
    const limiter = withFailurePolicy(store, { failure: 'open', onWarning: false });
    const decision = await limiter.limit('k');
    expect(decision).toMatchObject({ allowed: true, degraded: true, degradedReason: 'connection', failure: 'open' });
    expect(limiter.stats().connectionErrors).toBe(1);
  });

  it('a failed reset of the other copy counts towards the breaker', async () => {
    const other = await otherCopy();
    const store = failingLimiter(
      new other.StoreUnavailableError('down', new Error('connect ECONNREFUSED 127.0.0.1:1')),
    );
    const limiter = withFailurePolicy(store, {
      onWarning: false,
      breaker: { failureThreshold: 1, coolDownMs: 60_000 },
    });
    await expect(limiter.reset('k')).rejects.toThrow(/down/);
    expect(limiter.stats().breaker).toBe('open');
  });
});

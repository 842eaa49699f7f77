import { describe, expect, it } from 'vitest';
import { createLeasedLimiter, createMemoryLimiter, type Decision, gcra } from '../../src/index.js';

const pick = ({ allowed, admitted, remaining, retryAfterMs }: Decision) => ({
  allowed,
  admitted,
  remaining,
  retryAfterMs,
});

describe('leasing: partial admission spends held units first, then asks the remote partially for the rest', () => {
  it('GCRA 10 per s, lease 5: a lease hit, then held + remote in one call, then a denial waiting for one unit', async () => {
    let nowMs = 1_000_000;
    const clock = () => nowMs;
    const remote = createMemoryLimiter({ algorithm: gcra({ limit: 10, periodMs: 1000 }), clock, pruneIntervalMs: 0 });
    const leased = createLeasedLimiter({ remote, leaseSize: 5, clock });
    expect((await leased.limit('k')).allowed).toBe(true); // leases 5: 4 held, 5 left remotely
    expect(leased.tryLimit('k', { cost: 3, partial: true })).toBeUndefined();
    const calls = leased.stats().remoteCalls;
    expect(pick(await leased.limit('k', { cost: 3, partial: true }))).toEqual({
      allowed: true,
      admitted: 3,
      remaining: 6,
      retryAfterMs: 0,
    });
    expect(leased.stats().remoteCalls).toBe(calls);
    // 1 held + 5 of the 9 asked of the remote.
    expect(pick(await leased.limit('k', { cost: 10, partial: true }))).toEqual({
      allowed: true,
      admitted: 6,
      remaining: 0,
      retryAfterMs: 0,
    });
    expect(leased.stats().remoteCalls).toBe(calls + 1);
    expect(remote.peekSync('k').remaining).toBe(0);
    expect(pick(await leased.limit('k', { cost: 1000, partial: true }))).toEqual({
      allowed: false,
      admitted: 0,
      remaining: 0,
      retryAfterMs: 100,
    });
    nowMs += 100;
    expect((await leased.limit('k', { cost: 1000, partial: true })).admitted).toBe(1);
    expect(leased.stats().heldUnits).toBe(0);
    await leased.close();
  });

  it('a failed remote call gives the held units back to the key', async () => {
    let fail = false;
    const remote = createMemoryLimiter({ algorithm: gcra({ limit: 10, periodMs: 1000 }), clock: () => 0 });
    const flaky = {
      ...remote,
      limit: (key: string, options?: object) => (fail ? Promise.reject(new Error('down')) : remote.limit(key, options)),
    };
    const leased = createLeasedLimiter({ remote: flaky, leaseSize: 5, clock: () => 0 });
    await leased.limit('k');
    fail = true;
    await expect(leased.limit('k', { cost: 6, partial: true })).rejects.toThrow('down');
    expect(leased.stats().heldUnits).toBe(4);
    await expect(leased.limit('k', { cost: 4, partial: 'yes' as unknown as boolean })).rejects.toMatchObject({
      code: 'ERR_SLUICE_INVALID_COST',
    });
    expect(() => leased.tryLimit('k', { cost: 4, partial: 'yes' as unknown as boolean })).toThrow('partial');
    fail = false;
    await leased.close();
  });
});

import { describe, expect, it } from 'vitest';
import { createLeasedLimiter, createMemoryLimiter, gcra } from '../../src/index.js';

/** Microtask turns until `promise` settles: the machinery a caller's await pays for, as a count. */
async function turnsToSettle(promise: Promise<unknown>): Promise<number> {
  let settled = false;
  void promise.then(() => {
    settled = true;
  });
  let turns = 0;
  while (!settled) {
    await null;
    turns++;
  }
  return turns;
}

describe('a call passed through to the remote', () => {
  it('settles one microtask turn after the remote call, not three', async () => {
    // 1e9 per hour: a lease of 100 lasts 0.36 ms, shorter than any round trip, so every call passes through.
    const remote = createMemoryLimiter({ algorithm: gcra({ limit: 1e9, periodMs: 3_600_000 }), pruneIntervalMs: 0 });
    const leased = createLeasedLimiter({ remote, leaseSize: 100 });
    await leased.limit('hot');
    const direct = await turnsToSettle(remote.limit('hot'));
    const passed = await turnsToSettle(leased.limit('hot'));
    expect(leased.stats().passedThrough).toBe(2);
    expect(passed).toBeLessThanOrEqual(direct + 1);
  });
});

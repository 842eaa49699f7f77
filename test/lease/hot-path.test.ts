import { describe, expect, it } from 'vitest';
import { createLeasedLimiter, createMemoryLimiter, gcra } from '../../src/index.js';
import { haveSameMap } from '../support/v8-shapes.js';

describe('the leased limiter hot path, as V8 sees it', () => {
  for (const [where, cost] of [
    ['the local model', 11],
    ['the remote', 11],
  ] as const) {
    it(`a cost above the limit, denied by ${where}, leaves ordinary decisions' hidden class as it was`, async () => {
      // An Infinity stored once in the class every decision shares would box every later
      // decision's numbers, process-wide.
      const remote = createMemoryLimiter({ algorithm: gcra({ limit: 10, periodMs: 60_000 }), pruneIntervalMs: 0 });
      const leased = createLeasedLimiter({ remote, leaseSize: 5 });
      const before = await leased.limit('busy');
      // A key heard from is decided by the local model; a key never heard from asks the remote.
      if (where === 'the local model') await leased.limit('k');
      const never = await leased.limit('k', { cost });
      const after = await leased.limit('busy');
      expect(never).toMatchObject({ allowed: false, retryAfterMs: Number.POSITIVE_INFINITY });
      expect(haveSameMap(before, after)).toBe(true);
    });
  }
});

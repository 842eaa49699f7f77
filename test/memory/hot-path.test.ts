import { describe, expect, it } from 'vitest';
import { createMemoryLimiter, gcra } from '../../src/index.js';
import { profiles } from '../../src/testing/profiles.js';
import { hasFastProperties, haveSameMap } from '../support/v8-shapes.js';

describe('the memory limiter hot path, as V8 sees it', () => {
  it('the limiter keeps fast properties, so a call to limiter.limitSync is no dictionary lookup', () => {
    const limiter = createMemoryLimiter({ algorithm: gcra({ limit: 10, periodMs: 1_000 }), pruneIntervalMs: 0 });
    limiter.limitSync('k');
    expect(hasFastProperties(limiter)).toBe(true);
    // Still the getters an object literal would have had: enumerable, live.
    expect(Object.keys(limiter)).toEqual(expect.arrayContaining(['size', 'bytes']));
    expect(limiter.size).toBe(1);
    expect(limiter.bytes).toBeGreaterThan(0);
  });

  for (const profile of profiles) {
    it(`${profile.name}: a cost above the limit and a fresh key's peek leave ordinary decisions' hidden class as it was`, async () => {
      // V8 keeps a decision's numbers unboxed while its hidden class has only held small integers:
      // an Infinity or a -0 stored in it once would box every later decision's numbers.
      const limiter = createMemoryLimiter({ algorithm: profile.build(10, 60_000), pruneIntervalMs: 0 });
      const before = limiter.limitSync('busy');
      const never = limiter.limitSync('k', { cost: 11 });
      limiter.peekSync('fresh');
      await limiter.block?.('blocked', 1_000);
      const blocked = limiter.limitSync('blocked', { cost: 11 });
      expect(limiter.limitSync('blocked', { cost: 3, partial: true })).toMatchObject({
        reason: 'blocked',
        admitted: 0,
      });
      const after = limiter.limitSync('busy');
      expect(never.retryAfterMs).toBe(Number.POSITIVE_INFINITY);
      expect(blocked).toMatchObject({ reason: 'blocked', retryAfterMs: Number.POSITIVE_INFINITY });
      expect(haveSameMap(before, after)).toBe(true);
    });
  }
});

import { setFlagsFromString } from 'node:v8';
import { describe, expect, it } from 'vitest';
import { createMemoryLimiter, gcra } from '../../src/index.js';

// V8's own view of the objects every decision touches: shapes, never times.
setFlagsFromString('--allow-natives-syntax');
const hasFastProperties = new Function('object', 'return %HasFastProperties(object)') as (object: object) => boolean;

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
});

import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ConfigError, createMemoryLimiter, gcra, slidingWindowLog } from '../../src/index.js';
import { slidingWindowLogReference } from '../../src/testing/reference/sliding-window-log.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
/** Heap and ArrayBuffer bytes in use after a full collection. */
function bytesInUse(): number {
  gc();
  const { heapUsed, arrayBuffers } = process.memoryUsage();
  return heapUsed + arrayBuffers;
}
/**
 * Bytes in use once the collector has caught up: V8 frees an ArrayBuffer's memory on a background
 * thread after the collection, later still on a loaded machine, so a store that holds no more than
 * `bound` gets there within a few tries while one that keeps its garbage never does.
 */
async function settlesUnder(bound: number, before: number): Promise<number> {
  let growth = bytesInUse() - before;
  for (let i = 0; i < 50 && growth >= bound; i++) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    growth = bytesInUse() - before;
  }
  return growth;
}

const MB = 1024 * 1024;
const bigLog = () => slidingWindowLog({ limit: 1_000_000, windowMs: 60_000 });

describe('memory store bytes', () => {
  it('1,000 keys of a 1e6-limit log with one hit each hold under 2 MB', () => {
    let nowMs = 0;
    const before = bytesInUse();
    const arrayBuffersBefore = process.memoryUsage().arrayBuffers;
    const limiter = createMemoryLimiter({ algorithm: bigLog(), clock: () => nowMs, pruneIntervalMs: 0 });
    for (let i = 0; i < 1000; i++, nowMs++) {
      expect(limiter.limitSync(`key:${i}`)).toMatchObject({ allowed: true, remaining: 999_999 });
      // Checked on every key, so a store that reserves per key fails at the first one.
      expect(process.memoryUsage().arrayBuffers - arrayBuffersBefore).toBeLessThan(2 * MB);
    }
    expect(limiter.size).toBe(1000);
    expect(limiter.bytes).toBeLessThan(MB);
    expect(bytesInUse() - before).toBeLessThan(2 * MB);
    expect(limiter.peekSync('key:0').remaining).toBe(999_999);
  });

  it('a flood of growing logs that would pass maxBytes evicts instead of growing', async () => {
    let nowMs = 0;
    const maxBytes = 9 * MB; // one key at its largest (8 MB) and a little more
    const limiter = createMemoryLimiter({ algorithm: bigLog(), maxBytes, clock: () => nowMs, pruneIntervalMs: 0 });
    const before = bytesInUse();
    // 200 keys × 20,000 units: 160 KB of timestamps each once grown, 32 MB in all.
    for (let k = 0; k < 200; k++) {
      const decision = limiter.limitSync(`flood:${k}`, { cost: 10_000 });
      expect(decision.allowed).toBe(true);
      nowMs++;
      expect(limiter.limitSync(`flood:${k}`, { cost: 10_000 }).remaining).toBe(1_000_000 - 20_000);
      expect(limiter.bytes).toBeLessThanOrEqual(maxBytes);
    }
    expect(limiter.size).toBeLessThan(200);
    // After a full collection: the logs of evicted keys are garbage, not held, so only live ones count.
    expect(await settlesUnder(2 * maxBytes, before)).toBeLessThan(2 * maxBytes);
    // A key that grows to its largest evicts the others, never itself, and stays exact.
    for (let i = 0; i < 100; i++, nowMs++) {
      expect(limiter.limitSync('whale', { cost: 10_000 }).remaining).toBe(1_000_000 - 10_000 * (i + 1));
      expect(limiter.bytes).toBeLessThanOrEqual(maxBytes);
    }
    expect(limiter.limitSync('whale')).toMatchObject({ allowed: false, remaining: 0 });
    expect(limiter.bytes).toBeGreaterThan(8_000_000);
  });

  it('maxBytes bounds the keys of a fixed-size algorithm too (9 bytes a GCRA key)', () => {
    const limiter = createMemoryLimiter({
      algorithm: gcra({ limit: 1, periodMs: 60_000 }),
      maxBytes: 9 * 100,
      clock: () => 0,
      pruneIntervalMs: 0,
    });
    for (let i = 0; i < 1000; i++) limiter.limitSync(`k${i}`);
    expect(limiter.size).toBe(100);
    expect(limiter.bytes).toBe(900);
    expect(limiter.limitSync('k999').allowed).toBe(false);
  });

  it('rejects a maxBytes below one key at its largest, naming maxBytes', () => {
    // 8 × (limit + 2) bytes of timestamps and header, and a slot's recency byte.
    const largest = 8 * (1_000_000 + 2) + 1;
    expect(() => createMemoryLimiter({ algorithm: bigLog(), maxBytes: largest - 1 })).toThrow(ConfigError);
    expect(() => createMemoryLimiter({ algorithm: bigLog(), maxBytes: largest - 1 })).toThrow(/^maxBytes/);
    expect(createMemoryLimiter({ algorithm: bigLog(), maxBytes: largest }).bytes).toBe(1);
    expect(() => createMemoryLimiter({ algorithm: gcra({ limit: 1, periodMs: 1000 }), maxBytes: 8 })).toThrow(
      /maxBytes must be an integer in 9\.\./,
    );
  });
});

describe('a sliding-window log growing in the memory store', () => {
  it('decides as the reference model through every growth and wrap of its ring', () => {
    const step = fc.record({ key: fc.constantFrom('a', 'b', 'c'), advanceMs: fc.nat(40), cost: fc.nat(60) });
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 500 }), fc.array(step, { maxLength: 300 }), (limit, schedule) => {
        let nowMs = 0;
        const options = { limit, windowMs: 1000 };
        const limiter = createMemoryLimiter({
          algorithm: slidingWindowLog(options),
          clock: () => nowMs,
          pruneIntervalMs: 0,
        });
        const model = slidingWindowLogReference(options);
        for (const { key, advanceMs, cost } of schedule) {
          nowMs += advanceMs;
          expect(limiter.limitSync(key, { cost })).toEqual(model.decide(key, nowMs, cost));
        }
      }),
      { numRuns: 200 },
    );
  });
});

import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createMemoryLimiter, slidingWindowLog } from '../../src/index.js';
import { profiles } from '../../src/testing/profiles.js';

describe('memory store with a fake clock whose timers never run', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  // limit 2 per 5 s, hit at t=0, clock to t=6 s, hit. Expiry is judged from stored times, so
  // no timer has to fire. The window algorithms open a new window: remaining 1, reset in 5 s.
  const expected = {
    gcra: { remaining: 1, resetAfterMs: 2500 },
    'token-bucket': { remaining: 1, resetAfterMs: 2500 },
    'fixed-window': { remaining: 1, resetAfterMs: 5000 },
    'sliding-window-log': { remaining: 1, resetAfterMs: 5000 },
    // A new window whose previous one held 1 unit: weight ⌊1 × 4/5⌋ = 0; full again 4,001 ms on.
    'sliding-window-counter': { remaining: 1, resetAfterMs: 4001 },
  };

  it.each(profiles)('$name: limit 2 per 5 s, hit at 0, hit at 6 s', async (profile) => {
    let nowMs = 0;
    const limiter = createMemoryLimiter({ algorithm: profile.build(2, 5000), clock: () => nowMs });
    expect(limiter.limitSync('k')).toMatchObject({ allowed: true, remaining: 1 });
    nowMs = 6000;
    const decision = limiter.limitSync('k');
    expect(decision).toEqual({ allowed: true, limit: 2, retryAfterMs: 0, ...expected[profile.name] });
    expect(limiter.peekSync('k')).toMatchObject({ allowed: true, remaining: 1 });
    expect(vi.getTimerCount()).toBe(1); // the prune timer exists and never ran
    await limiter.close();
  });
});

describe('sliding window log in the memory store', () => {
  it('keeps exact counts as its ring wraps many times, with costs and same-millisecond requests', () => {
    let nowMs = 0;
    const limit = 7;
    const limiter = createMemoryLimiter({
      algorithm: slidingWindowLog({ limit, windowMs: 100 }),
      clock: () => nowMs,
      pruneIntervalMs: 0,
    });
    const admitted: number[] = [];
    for (let i = 0; i < 2000; i++) {
      nowMs += i % 3 === 0 ? 0 : (i * 13) % 29;
      const cost = 1 + (i % 3);
      const inWindow = admitted.filter((t) => t > nowMs - 100).length;
      const decision = limiter.limitSync('k', { cost });
      expect(decision.allowed).toBe(inWindow + cost <= limit);
      if (decision.allowed) for (let c = 0; c < cost; c++) admitted.push(nowMs);
      expect(decision.remaining).toBe(limit - admitted.filter((t) => t > nowMs - 100).length);
    }
  });

  it('evicts and prunes wide state like any other: 100 keys through a 10-key store', () => {
    let nowMs = 0;
    const limiter = createMemoryLimiter({
      algorithm: slidingWindowLog({ limit: 50, windowMs: 1000 }),
      maxKeys: 10,
      clock: () => nowMs,
      pruneIntervalMs: 0,
    });
    for (let i = 0; i < 100; i++) {
      expect(limiter.limitSync(`k${i}`, { cost: 50 }).allowed).toBe(true);
      expect(limiter.size).toBeLessThanOrEqual(10);
    }
    expect(limiter.limitSync('k99')).toMatchObject({ allowed: false, retryAfterMs: 1000 });
    nowMs = 1000;
    expect(limiter.prune()).toBe(10);
    expect(limiter.limitSync('k99', { cost: 50 }).allowed).toBe(true);
  });
});

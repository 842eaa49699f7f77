import { describe, expect, it, vi } from 'vitest';
import { ConfigError, createMemoryLimiter, gcra, InvalidKeyError } from '../../src/index.js';

function setup({ maxKeys, ...rate }: { limit: number; periodMs: number; burst?: number; maxKeys?: number }) {
  let nowMs = 0;
  const limiter = createMemoryLimiter({
    algorithm: gcra(rate),
    maxKeys,
    clock: () => nowMs,
    pruneIntervalMs: 0,
  });
  return { limiter, at: (ms: number) => (nowMs = ms) };
}

describe('GCRA worked case (5 per 10 s, burst 5)', () => {
  it('admits 5, then denies with exact retry-after, Infinity for cost 6, admits 5 at 10 s', () => {
    const { limiter, at } = setup({ limit: 5, periodMs: 10_000 });
    expect(limiter.limitSync('k', { cost: 5 })).toEqual({
      allowed: true,
      limit: 5,
      remaining: 0,
      retryAfterMs: 0,
      resetAfterMs: 10_000,
    });
    at(1000);
    expect(limiter.limitSync('k', { cost: 5 })).toEqual({
      allowed: false,
      limit: 5,
      remaining: 0,
      retryAfterMs: 9000,
      resetAfterMs: 9000,
    });
    expect(limiter.limitSync('k', { cost: 6 }).retryAfterMs).toBe(Number.POSITIVE_INFINITY);
    at(10_000);
    expect(limiter.limitSync('k', { cost: 5 }).allowed).toBe(true);
  });

  it('admits at most burst + ⌊Δ/T⌋ over any interval when hammered every millisecond', () => {
    const { limiter, at } = setup({ limit: 5, periodMs: 10_000, burst: 3 });
    const admittedAt: number[] = [];
    for (let t = 0; t <= 60_000; t += 1) {
      at(t);
      if (limiter.limitSync('k').allowed) admittedAt.push(t);
    }
    // T = 2 s: 3 at once, then one every 2 s.
    expect(admittedAt.length).toBe(3 + 30);
    for (let i = 0; i < admittedAt.length; i++) {
      for (let j = i; j < admittedAt.length; j++) {
        const span = (admittedAt[j] as number) - (admittedAt[i] as number);
        expect(j - i + 1).toBeLessThanOrEqual(3 + Math.floor(span / 2000));
      }
    }
  });
});

describe('bounded memory store', () => {
  it('with max 2 keys, A, A, B, C, D, E, A raises nothing, holds ≤ 2 keys and decides right for what it holds', () => {
    const { limiter } = setup({ limit: 1, periodMs: 10_000, maxKeys: 2 });
    const sequence = ['A', 'A', 'B', 'C', 'D', 'E', 'A'];
    const allowed = sequence.map((key) => {
      const decision = limiter.limitSync(key);
      expect(limiter.size).toBeLessThanOrEqual(2);
      return decision.allowed;
    });
    // The second A is denied (A still held); A was evicted by then, so the last A starts fresh.
    expect(allowed).toEqual([true, false, true, true, true, true, true]);
    expect(limiter.limitSync('E').allowed).toBe(false);
  });

  it('evicts expired state before a live least-recently-used key', () => {
    const { limiter, at } = setup({ limit: 10, periodMs: 10_000, maxKeys: 2 });
    limiter.limitSync('A', { cost: 10 }); // least recently used, full again only at 10 s
    at(1000);
    limiter.limitSync('B'); // more recent, but full again at 2 s
    at(3500);
    limiter.limitSync('C'); // table full: B (expired) goes, not A (live)
    expect(limiter.size).toBe(2);
    // A kept its state: 3.5 s regenerated 3 units, this call spends 1.
    expect(limiter.limitSync('A').remaining).toBe(2);
  });

  it('judges expiry by timestamp, not by a timer: an expired key is fresh with no timer ever run', () => {
    const { limiter, at } = setup({ limit: 2, periodMs: 5000 });
    limiter.limitSync('k', { cost: 2 });
    at(6000);
    expect(limiter.limitSync('k')).toMatchObject({ allowed: true, remaining: 1, resetAfterMs: 2500 });
  });

  it('100,000 one-shot keys with a 1 s period, then 2 s idle: holds 0 entries after a prune', () => {
    const { limiter, at } = setup({ limit: 1, periodMs: 1000, maxKeys: 200_000 });
    for (let i = 0; i < 100_000; i++) limiter.limitSync(`one-shot:${i}`);
    expect(limiter.size).toBe(100_000);
    at(2000);
    expect(limiter.prune()).toBe(100_000);
    expect(limiter.size).toBe(0);
  });

  it('drops expired keys from one unref-ed timer when idle', async () => {
    vi.useFakeTimers();
    try {
      let nowMs = 0;
      const limiter = createMemoryLimiter({
        algorithm: gcra({ limit: 1, periodMs: 1000 }),
        clock: () => nowMs,
        pruneIntervalMs: 500,
      });
      for (let i = 0; i < 1000; i++) limiter.limitSync(`idle:${i}`);
      nowMs = 2000;
      await vi.advanceTimersByTimeAsync(500);
      expect(limiter.size).toBe(0);
      await limiter.close();
    } finally {
      vi.useRealTimers();
    }
  });

  it('with room for 2 blocks, a third drops the oldest set, never a live block ending sooner', async () => {
    let nowMs = 0;
    const limiter = createMemoryLimiter({
      algorithm: gcra({ limit: 5, periodMs: 1000 }),
      maxKeys: 2,
      clock: () => nowMs,
    });
    await limiter.block?.('a', 10_000);
    await limiter.block?.('b', 20_000);
    await limiter.block?.('c', 30_000);
    expect(['a', 'b', 'c'].map((key) => limiter.limitSync(key).reason ?? 'admitted')).toEqual([
      'admitted',
      'blocked',
      'blocked',
    ]);
    nowMs = 20_000;
    await limiter.block?.('d', 5_000); // b is over now: it goes, not c
    expect(['c', 'd'].map((key) => limiter.limitSync(key).reason)).toEqual(['blocked', 'blocked']);
  });

  it('a denied stranger takes no slot', () => {
    const { limiter } = setup({ limit: 1, periodMs: 1000, maxKeys: 1 });
    limiter.limitSync('held');
    expect(limiter.limitSync('stranger', { cost: 2 }).allowed).toBe(false);
    expect(limiter.size).toBe(1);
    expect(limiter.limitSync('held').allowed).toBe(false);
  });
});

describe('per-decision work', () => {
  type WellFormed = { isWellFormed(): boolean };
  const proto = String.prototype as unknown as WellFormed;

  /** Calls of `String.prototype.isWellFormed` (the key check's scan) while `run` runs. */
  function keyScans(run: () => void): number {
    const spy = vi.spyOn(proto, 'isWellFormed');
    try {
      run();
      return spy.mock.calls.length;
    } finally {
      spy.mockRestore();
    }
  }

  it('checks a key once, when it goes in, not on every decision for it', () => {
    const { limiter } = setup({ limit: 1_000_000, periodMs: 1000 });
    expect(keyScans(() => limiter.limitSync('held'))).toBe(1);
    expect(
      keyScans(() => {
        for (let i = 0; i < 1000; i++) limiter.limitSync('held');
      }),
    ).toBe(0);
    // A stranger is still checked on every call, and a bad one still throws.
    expect(keyScans(() => limiter.limitSync('other'))).toBe(1);
    expect(() => limiter.limitSync('bad\ud800')).toThrow(InvalidKeyError);
    expect(() => limiter.limitSync('')).toThrow(InvalidKeyError);
  });
});

describe('the default clock', () => {
  it('reads the performance object loaded with Sluice, not the global getter, on each decision', () => {
    const limiter = createMemoryLimiter({ algorithm: gcra({ limit: 1_000_000, periodMs: 1000 }), pruneIntervalMs: 0 });
    const descriptor = Object.getOwnPropertyDescriptor(globalThis, 'performance');
    let globalReads = 0;
    const loaded = performance;
    Object.defineProperty(globalThis, 'performance', {
      configurable: true,
      get: () => {
        globalReads++;
        return loaded;
      },
    });
    try {
      for (let i = 0; i < 100; i++) expect(limiter.limitSync('held').allowed).toBe(true);
    } finally {
      if (descriptor) Object.defineProperty(globalThis, 'performance', descriptor);
    }
    expect(globalReads).toBe(0);
  });
});

describe('CLOCK eviction', () => {
  it('keeps a key used since the eviction hand last passed it, evicting an unused one', () => {
    const { limiter } = setup({ limit: 1, periodMs: 60_000, maxKeys: 3 });
    for (const key of ['A', 'B', 'C']) limiter.limitSync(key);
    limiter.limitSync('D'); // full: the hand clears every mark, then takes A
    limiter.limitSync('B'); // B is used again (denied: it holds its unit)
    limiter.limitSync('E'); // the hand, now at B, spares it and takes C
    expect(limiter.size).toBe(3);
    expect(limiter.limitSync('B').allowed).toBe(false); // still held
    expect(limiter.limitSync('C').allowed).toBe(true); // evicted, so fresh
  });
});

describe('CLOCK eviction under a flood', () => {
  it('keeps a key used between every two arrivals of new keys through 20,000 evictions, resets and prunes', () => {
    // One unit comes back every 3.6 ms: a flood key is fresh again 3.6 ms on, the hot key 30 min on.
    const { limiter, at } = setup({ limit: 1_000_000, periodMs: 3_600_000, maxKeys: 1000 });
    // Not first under the hand: the first eviction's full turn clears every mark, then takes the first key.
    for (let i = -999; i < 0; i++) limiter.limitSync(`flood:${i}`);
    limiter.limitSync('hot', { cost: 500_000 });
    for (let i = 0; i < 20_000; i++) {
      limiter.limitSync(`flood:${i}`);
      if (i % 7 === 0) limiter.resetSync(`flood:${i - 3}`);
      if (i % 5_000 === 4_999) at(i);
      if (i % 5_000 === 4_999) expect(limiter.prune()).toBeGreaterThan(0);
      expect(limiter.size).toBeLessThanOrEqual(1000);
      // Still held: a fresh key would have 999,999 left.
      expect(limiter.limitSync('hot').remaining).toBeLessThan(999_999);
    }
  });
});

describe('configuration errors are typed and thrown at construction', () => {
  const bad = [
    { limit: 0, periodMs: 1000 },
    { limit: -1, periodMs: 1000 },
    { limit: Number.NaN, periodMs: 1000 },
    { limit: Number.POSITIVE_INFINITY, periodMs: 1000 },
    { limit: 1.5, periodMs: 1000 },
    { limit: 10, periodMs: 0 },
    { limit: 10, periodMs: -5 },
    { limit: 10, periodMs: Number.NaN },
    { limit: 10, periodMs: 1000, burst: 0 },
  ];
  for (const options of bad) {
    it(`gcra(${JSON.stringify(options)}) throws ConfigError`, () => {
      expect(() => gcra(options)).toThrow(ConfigError);
    });
  }
  it('maxKeys 0 throws ConfigError', () => {
    expect(() => createMemoryLimiter({ algorithm: gcra({ limit: 1, periodMs: 1 }), maxKeys: 0 })).toThrow(ConfigError);
  });
});

import { afterEach, describe, expect, it, vi } from 'vitest';
import { ClockError, createMemoryLimiter, MAX_CLOCK_MS } from '../../src/index.js';
import { profiles } from '../../src/testing/profiles.js';

const LIMIT = 10;
const PERIOD_MS = 60_000;
const T0 = 1_000_000;
const BAD_READINGS = [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, -1, MAX_CLOCK_MS + 1, 1e300];

/** A limit-10-per-minute limiter whose clock reads `bad` once, at the next read after `arm()`. */
function withGlitch(profile: (typeof profiles)[number], bad: number) {
  let nowMs = T0;
  let glitch = false;
  const limiter = createMemoryLimiter({
    algorithm: profile.build(LIMIT, PERIOD_MS),
    clock: () => {
      if (!glitch) return nowMs;
      glitch = false;
      return bad;
    },
    pruneIntervalMs: 0,
  });
  const admittedOf100 = (): number => {
    let admitted = 0;
    for (let i = 0; i < 100; i++, nowMs++) if (limiter.limitSync('k').allowed) admitted++;
    return admitted;
  };
  return { limiter, admittedOf100, arm: () => (glitch = true) };
}

describe('a memory limiter whose clock reads one unusable value', () => {
  for (const profile of profiles) {
    for (const bad of BAD_READINGS) {
      it(`${profile.name}: refuses ${bad} with ClockError, then admits exactly ${LIMIT} of the next 100`, async () => {
        const { limiter, admittedOf100, arm } = withGlitch(profile, bad);
        arm();
        expect(() => limiter.limitSync('k')).toThrow(ClockError);
        arm();
        await expect(limiter.limit('k')).rejects.toMatchObject({ name: 'ClockError', code: 'ERR_SLUICE_CLOCK' });
        arm();
        expect(() => limiter.peekSync('k')).toThrow(ClockError);
        expect(admittedOf100()).toBe(LIMIT);
        // Held state too: a bad reading in the middle of a window changes nothing.
        arm();
        expect(() => limiter.limitSync('k')).toThrow(ClockError);
        expect(admittedOf100()).toBe(0);
        expect(limiter.size).toBe(1);
      });
    }

    it(`${profile.name}: a reading far behind the last one is never written back: ${LIMIT} of 100 in one window`, () => {
      let nowMs = 1e12;
      let behind = false;
      const limiter = createMemoryLimiter({
        algorithm: profile.build(LIMIT, PERIOD_MS),
        clock: () => (behind ? 0 : nowMs),
        pruneIntervalMs: 0,
      });
      let admitted = 0;
      for (let i = 0; i < 100; i++, nowMs++) {
        behind = i === 5 || i === 50;
        if (limiter.limitSync('k').allowed) admitted++;
      }
      expect(admitted).toBe(LIMIT);
    });
  }

  it('refuses a bad reading in refund and prune too, writing nothing', async () => {
    const gcraProfile = profiles.find((p) => p.name === 'gcra');
    if (!gcraProfile) throw new Error('no gcra profile');
    const { limiter, admittedOf100, arm } = withGlitch(gcraProfile, Number.NaN);
    expect(admittedOf100()).toBe(LIMIT);
    arm();
    await expect(limiter.refund?.('k', 5)).rejects.toThrow(ClockError);
    arm();
    expect(() => limiter.prune()).toThrow(ClockError);
    expect(admittedOf100()).toBe(0);
  });
});

describe('the prune timer with a clock that reads +Infinity once', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('skips that round instead of dropping every key', () => {
    vi.useFakeTimers();
    let reading = T0;
    const fixed = profiles.find((p) => p.name === 'fixed-window');
    if (!fixed) throw new Error('no fixed-window profile');
    const limiter = createMemoryLimiter({
      algorithm: fixed.build(LIMIT, PERIOD_MS),
      clock: () => reading,
      pruneIntervalMs: 1000,
    });
    expect(limiter.limitSync('k', { cost: LIMIT }).allowed).toBe(true);
    reading = Number.POSITIVE_INFINITY;
    vi.advanceTimersByTime(1000);
    reading = T0 + 1;
    expect(limiter.size).toBe(1);
    expect(limiter.limitSync('k').allowed).toBe(false);
    void limiter.close();
  });
});

import { describe, expect, it } from 'vitest';
import { fixedWindow, slidingWindowCounter, slidingWindowLog, tokenBucket } from '../../src/index.js';
import { profiles } from '../../src/testing/profiles.js';
import { fixedWindowReference } from '../../src/testing/reference/fixed-window.js';
import { slidingWindowCounterReference } from '../../src/testing/reference/sliding-window-counter.js';
import { slidingWindowLogReference } from '../../src/testing/reference/sliding-window-log.js';
import { tokenBucketReference } from '../../src/testing/reference/token-bucket.js';
import { useRedisServer } from '../support/redis-server.js';
import { T0, targets } from './stores.js';

const { redis } = useRedisServer();

const SECOND = 1000;
const HOUR = 3600 * SECOND;
const INF = Number.POSITIVE_INFINITY;

// The sliding counter waits 1 ms longer: the previous window's single unit weighs ⌊(W − e) / W⌋ = 1 until e = 1 ms.
const retryOfOneAfter = (periodMs: number, elapsedMs: number, name: string) =>
  periodMs - elapsedMs + (name === 'sliding-window-counter' ? 1 : 0);

describe.each(targets(redis))('issue cases on $name', (target) => {
  describe.each(profiles)('$name', (profile) => {
    const drive = (limit: number, periodMs: number) =>
      target.drive(profile.build(limit, periodMs), profile.reference(limit, periodMs));

    it('limit 1 per 10 s: t=0 allowed, t=1 s denied, t=20 s allowed', async () => {
      const l = drive(1, 10 * SECOND);
      expect(await l.decide('k', T0)).toMatchObject({ allowed: true, remaining: 0, retryAfterMs: 0 });
      expect(await l.decide('k', T0 + SECOND)).toMatchObject({
        allowed: false,
        remaining: 0,
        retryAfterMs: retryOfOneAfter(10 * SECOND, SECOND, profile.name),
      });
      expect(await l.decide('k', T0 + 20 * SECOND)).toMatchObject({ allowed: true, remaining: 0 });
    });

    it('limit 1 per 24 h: t=0 allowed, t=1 s denied until the day is over, t=48 h allowed', async () => {
      const l = drive(1, 24 * HOUR);
      expect((await l.decide('k', T0)).allowed).toBe(true);
      expect(await l.decide('k', T0 + SECOND)).toMatchObject({
        allowed: false,
        remaining: 0,
        retryAfterMs: retryOfOneAfter(24 * HOUR, SECOND, profile.name),
      });
      expect((await l.decide('k', T0 + 48 * HOUR)).allowed).toBe(true);
    });

    it('limit 1 per 1 ms: t=0 allowed, t=2 ms allowed, t=4 ms allowed', async () => {
      // Same-millisecond denial on Redis is pinned in redis-cases.test.ts (one atomic batch):
      // between two separate calls a 1 ms TTL may run out on Redis's own clock.
      const l = drive(1, 1);
      for (const t of [0, 2, 4]) {
        expect(await l.decide('k', T0 + t)).toMatchObject({ allowed: true, remaining: 0, retryAfterMs: 0 });
      }
    });

    it('limit 5 per 60 s: 7 hits then cost 9 leave remaining 4, 3, 2, 1, 0, 0, 0, 0', async () => {
      const l = drive(5, 60 * SECOND);
      const remaining: number[] = [];
      for (let i = 0; i < 7; i++) remaining.push((await l.decide('k', T0 + i)).remaining);
      const huge = await l.decide('k', T0 + 7, 9);
      remaining.push(huge.remaining);
      expect(remaining).toEqual([4, 3, 2, 1, 0, 0, 0, 0]);
      expect(huge).toMatchObject({ allowed: false, retryAfterMs: INF });
    });
  });

  describe('boundary behaviour, limit 5 per 10 s: 1 unit at t=0, 4 at 9.999 s, then more at 10 s', () => {
    const options = { limit: 5, windowMs: 10 * SECOND };
    const burstAtBoundary = async (l: ReturnType<typeof target.drive>) => {
      expect((await l.decide('k', T0, 1)).allowed).toBe(true);
      expect(await l.decide('k', T0 + 9999, 4)).toMatchObject({ allowed: true, remaining: 0 });
    };

    it('fixed window: nothing comes back until the window closes, then the whole limit at once (9 units in 2 ms)', async () => {
      const l = target.drive(fixedWindow(options), fixedWindowReference(options));
      await burstAtBoundary(l);
      expect(await l.decide('k', T0 + 9999, 1)).toMatchObject({ allowed: false, retryAfterMs: 1 });
      expect(await l.decide('k', T0 + 10_000, 5)).toMatchObject({ allowed: true, remaining: 0, resetAfterMs: 10_000 });
    });

    it('sliding window log: only the unit from t=0 comes back; the rest one window after they were admitted', async () => {
      const l = target.drive(slidingWindowLog(options), slidingWindowLogReference(options));
      await burstAtBoundary(l);
      expect(await l.decide('k', T0 + 10_000, 2)).toMatchObject({ allowed: false, remaining: 1, retryAfterMs: 9999 });
      expect(await l.decide('k', T0 + 10_000, 1)).toMatchObject({ allowed: true, remaining: 0 });
      expect(await l.decide('k', T0 + 19_999, 4)).toMatchObject({ allowed: true, remaining: 0 });
    });

    it('sliding window counter: the previous window weighs fully at the boundary and gives back as it slides out', async () => {
      const l = target.drive(slidingWindowCounter(options), slidingWindowCounterReference(options));
      await burstAtBoundary(l);
      expect(await l.decide('k', T0 + 10_000, 1)).toMatchObject({ allowed: false, remaining: 0, retryAfterMs: 1 });
      // ⌊5 × 9,999 / 10,000⌋ = 4: one unit back 1 ms into the window; ⌊5 × 5,000 / 10,000⌋ = 2 at its middle.
      expect(await l.decide('k', T0 + 10_001, 1)).toMatchObject({ allowed: true, remaining: 0 });
      expect(await l.decide('k', T0 + 15_000, 2)).toMatchObject({ allowed: true, remaining: 0 });
    });
  });

  describe('token bucket', () => {
    const drive = (capacity: number, rate: number, periodMs: number) =>
      target.drive(tokenBucket({ capacity, rate, periodMs }), tokenBucketReference({ capacity, rate, periodMs }));

    it('capacity 10, refill 10 per 60 s: cost 1 at 0, 3.5 s and 7 s leaves 9, 8, 8 (whole tokens)', async () => {
      const l = drive(10, 10, 60 * SECOND);
      const remaining = [];
      for (const t of [0, 3500, 7000]) remaining.push((await l.decide('k', T0 + t)).remaining);
      expect(remaining).toEqual([9, 8, 8]);
    });

    it('capacity 5, refill 1 per 10 s: cost 3, 5 (denied, 30 s), 2, then 1,000,000 (never possible)', async () => {
      const l = drive(5, 1, 10 * SECOND);
      expect(await l.decide('k', T0, 3)).toMatchObject({ allowed: true, remaining: 2, retryAfterMs: 0 });
      expect(await l.decide('k', T0, 5)).toMatchObject({ allowed: false, remaining: 2, retryAfterMs: 30_000 });
      expect(await l.decide('k', T0, 2)).toMatchObject({ allowed: true, remaining: 0, retryAfterMs: 0 });
      expect(await l.decide('k', T0, 1_000_000)).toMatchObject({ allowed: false, remaining: 0, retryAfterMs: INF });
      // The state is unchanged: one token back after exactly 10 s, not before.
      expect(await l.decide('k', T0 + 9999)).toMatchObject({ allowed: false, retryAfterMs: 1 });
      expect(await l.decide('k', T0 + 10_000)).toMatchObject({ allowed: true, remaining: 0 });
    });
  });
});

/** A clock that moves only when told: the conformance suite's source of time. */
export interface ManualClock {
  /** Current time, epoch-like milliseconds (integer). */
  now(): number;
  /** Moves time forward by `ms` (≥ 0); a negative `ms` throws `RangeError`. */
  advance(ms: number): void;
}

/**
 * A {@link ManualClock} starting at `startMs` (default 1,700,000,000,000: a plausible epoch ms for Redis TTLs).
 * @example
 * ```ts
 * import { createMemoryLimiter, gcra } from 'sluice';
 * import { manualClock } from 'sluice/testing';
 *
 * const clock = manualClock();
 * const limiter = createMemoryLimiter({ algorithm: gcra({ limit: 1, periodMs: 1_000 }), clock: clock.now });
 * limiter.limitSync('k').allowed; // true
 * limiter.limitSync('k').allowed; // false: retryAfterMs 1000
 * clock.advance(1_000);
 * limiter.limitSync('k').allowed; // true
 * ```
 */
export function manualClock(startMs = 1_700_000_000_000): ManualClock {
  let nowMs = startMs;
  return {
    now: () => nowMs,
    advance(ms) {
      if (!(ms >= 0)) throw new RangeError('a manual clock only moves forward');
      nowMs += ms;
    },
  };
}

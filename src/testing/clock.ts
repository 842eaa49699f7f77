/** A clock that moves only when told: the conformance suite's source of time. */
export interface ManualClock {
  /** Current time, epoch-like milliseconds (integer). */
  now(): number;
  /** Moves time forward by `ms` (≥ 0). */
  advance(ms: number): void;
}

/** A {@link ManualClock} starting at `startMs` (default 1,700,000,000,000: a plausible epoch ms for Redis TTLs). */
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

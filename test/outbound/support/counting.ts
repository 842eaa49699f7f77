import type { Decision, Limiter, LimitOptions } from '../../../src/index.js';

/** A real limiter, decorated to count what passes through it: calls, units charged and refunded. */
export interface Counted {
  limiter: Limiter;
  /** `limit` calls made. */
  calls: number;
  /** Units admitted minus units refunded. */
  charged: number;
  /** `limit` and `refund` calls sent and not yet answered: until 0, the store may hold units `charged` does not count yet. */
  pending: number;
}

export function counting(inner: Limiter): Counted {
  const counted: Counted = {
    calls: 0,
    charged: 0,
    pending: 0,
    limiter: {
      algorithm: inner.algorithm,
      async limit(key: string, options?: LimitOptions): Promise<Decision> {
        counted.calls++;
        counted.pending++;
        try {
          const decision = await inner.limit(key, options);
          if (decision.allowed) counted.charged += options?.cost ?? 1;
          return decision;
        } finally {
          counted.pending--;
        }
      },
      peek: (key) => inner.peek(key),
      reset: (key) => inner.reset(key),
      close: () => inner.close(),
      ...(inner.refund && {
        async refund(key: string, units: number) {
          counted.pending++;
          try {
            await inner.refund?.(key, units);
            counted.charged -= units;
          } finally {
            counted.pending--;
          }
        },
      }),
    },
  };
  return counted;
}

/** Timers alive in this process (`process.getActiveResourcesInfo()`), to prove none was left behind. */
export function liveTimers(): number {
  return process.getActiveResourcesInfo().filter((name) => name === 'Timeout').length;
}

/** Most entries of sorted `times` (ms) inside any half-open window of `windowMs`. */
export function maxInWindow(times: readonly number[], windowMs: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  let most = 0;
  let start = 0;
  for (let end = 0; end < sorted.length; end++) {
    while ((sorted[end] as number) - (sorted[start] as number) >= windowMs) start++;
    most = Math.max(most, end - start + 1);
  }
  return most;
}

/** Shortest span (ms) between an entry of `times` and the `n`-th after it; Infinity with n entries or fewer. */
export function tightestSpan(times: readonly number[], n: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  let tightest = Number.POSITIVE_INFINITY;
  for (let i = 0; i + n < sorted.length; i++)
    tightest = Math.min(tightest, (sorted[i + n] as number) - (sorted[i] as number));
  return tightest;
}

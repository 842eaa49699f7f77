import { ConfigError } from '../errors.js';
import { requireAlgorithm, requireInteger } from '../validate.js';
import { fixedWindow } from './fixed-window.js';
import { gcra } from './gcra.js';
import { slidingWindowCounter } from './sliding-window-counter.js';
import { slidingWindowLog } from './sliding-window-log.js';
import { tokenBucket } from './token-bucket.js';
import type { Algorithm, AlgorithmName } from './types.js';

/** One instance's share of a count: at least 1, so every instance can admit something. */
const share = (units: number, n: number) => Math.max(1, Math.floor(units / n));

/** Rebuilds each algorithm from its `scriptParams` (the integers its Lua twin reads) with the limit divided. */
const dividers: Record<AlgorithmName, (params: readonly number[], n: number) => Algorithm> = {
  // [emission interval µs, burst]: the interval grows N-fold, the burst shrinks N-fold.
  gcra: ([intervalUs, burst], n) => gcraWithInterval((intervalUs as number) * n, share(burst as number, n)),
  // [capacity, ms per token unit, units per ms]: refill `rate` per `periodMs` becomes rate per N × periodMs.
  'token-bucket': ([capacity, unit, refill], n) =>
    tokenBucket({ capacity: share(capacity as number, n), rate: refill as number, periodMs: (unit as number) * n }),
  // [limit, windowMs]: the same windows, each holding limit ÷ N.
  'fixed-window': ([limit, windowMs], n) =>
    fixedWindow({ limit: share(limit as number, n), windowMs: windowMs as number }),
  'sliding-window-log': ([limit, windowMs], n) =>
    slidingWindowLog({ limit: share(limit as number, n), windowMs: windowMs as number }),
  'sliding-window-counter': ([limit, windowMs], n) =>
    slidingWindowCounter({ limit: share(limit as number, n), windowMs: windowMs as number }),
};

/**
 * The same algorithm holding one instance's share of the limit, for the local fallback policy:
 * N processes each deciding alone with it admit together no more than the original would,
 * except that a limit below N still gives every instance 1. `instances` 1 returns `algorithm`.
 *
 * | algorithm | share |
 * |---|---|
 * | GCRA | emission interval × N, burst ÷ N |
 * | token bucket | refill rate ÷ N, capacity ÷ N |
 * | fixed window, sliding window log / counter | limit ÷ N per window of the same length |
 *
 * Counts are rounded down (90 ÷ 4 → 22 each), so the fleet never exceeds the limit by rounding.
 *
 * @throws {ConfigError} when `algorithm` is not one, `instances` is not a positive integer, the
 * algorithm is unknown, or the divided period is out of the algorithm's range.
 */
export function divideAlgorithm(algorithm: Algorithm, instances: number): Algorithm {
  requireAlgorithm('algorithm', algorithm);
  const n = requireInteger('instances', instances);
  if (n === 1) return algorithm;
  const divide = Object.hasOwn(dividers, algorithm.name) ? dividers[algorithm.name] : undefined;
  if (!divide) {
    throw new ConfigError(
      `no local fallback for algorithm '${algorithm.name}'; pass fallback.algorithm: (instances) => Algorithm`,
    );
  }
  return divide(algorithm.scriptParams, n);
}

/** GCRA with an exact emission interval: `gcra()` takes a rate, and 1000 units per `intervalUs` ms is one unit per `intervalUs` µs. */
function gcraWithInterval(intervalUs: number, burst: number): Algorithm {
  if (intervalUs % 1000 === 0) return gcra({ limit: 1, periodMs: intervalUs / 1000, burst });
  return gcra({ limit: 1000, periodMs: intervalUs, burst });
}

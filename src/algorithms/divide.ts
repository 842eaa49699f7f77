import { ConfigError } from '../errors.js';
import { requireAlgorithm, requireInteger } from '../validate.js';
import type { Algorithm } from './types.js';

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
  if (typeof algorithm.divide !== 'function') {
    throw new ConfigError(
      `no local fallback for algorithm '${algorithm.name}'; pass fallback.algorithm: (instances) => Algorithm`,
    );
  }
  return algorithm.divide(n);
}

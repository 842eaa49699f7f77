import { gcra } from '../algorithms/gcra.js';
import type { Algorithm } from '../algorithms/types.js';
import { ConfigError } from '../errors.js';
import { requireInteger } from '../validate.js';

/**
 * The same algorithm holding one instance's share of the limit: rate ÷ `instances` and
 * burst ÷ `instances` (rounded down, at least 1), so `instances` processes each deciding
 * locally admit together no more than the original would (except that a burst below
 * `instances` still gives every instance 1). `instances` 1 returns `algorithm` itself.
 *
 * Supported: `'gcra'` (emission interval × N, burst ÷ N). Other algorithms throw; pass your
 * own `fallback.algorithm` for them.
 *
 * @throws {ConfigError} when `instances` is not a positive integer, the algorithm has no
 * divided form here, or the divided emission interval is out of GCRA's range.
 */
export function divideAlgorithm(algorithm: Algorithm, instances: number): Algorithm {
  const n = requireInteger('instances', instances);
  if (n === 1) return algorithm;
  if (algorithm.name === 'gcra') {
    const [intervalUs, burst] = algorithm.scriptParams as [number, number];
    return gcraWithInterval(intervalUs * n, Math.max(1, Math.floor(burst / n)));
  }
  throw new ConfigError(
    `no local fallback for algorithm '${algorithm.name}' yet; pass fallback.algorithm: (instances) => Algorithm`,
  );
}

/** GCRA with an exact emission interval: `gcra()` takes a rate, and 1000 units per `intervalUs` ms is one unit per `intervalUs` µs. */
function gcraWithInterval(intervalUs: number, burst: number): Algorithm {
  if (intervalUs % 1000 === 0) return gcra({ limit: 1, periodMs: intervalUs / 1000, burst });
  return gcra({ limit: 1000, periodMs: intervalUs, burst });
}

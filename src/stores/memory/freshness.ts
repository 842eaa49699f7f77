import type { Algorithm } from '../../algorithms/types.js';

/** Distinct per-call algorithms followed before expiry gives up reading states as fresh. */
const MOST_FOLLOWED = 16;

/**
 * When a key's state is fresh again, whatever numbers wrote it. A state's freshness can depend
 * on the numbers it was written under (a token bucket refills at the call's rate, a window is
 * the call's length), so a key written under per-call params is judged by the latest of every
 * algorithm seen: expiry and pruning never drop a key that one of them still limits. Past
 * {@link MOST_FOLLOWED} distinct ones no state reads as fresh, so keys leave only by recency
 * eviction, as a full table's live keys do.
 */
export function freshnessOf(base: Algorithm): {
  freshAtMs: Algorithm['freshAtMs'];
  seen(algorithm: Algorithm): Algorithm;
} {
  const followed = new Set<Algorithm>([base]);
  let overflowed = false;
  return {
    freshAtMs(state, offset) {
      if (overflowed) return Number.POSITIVE_INFINITY;
      let latest = 0;
      for (const algorithm of followed) latest = Math.max(latest, algorithm.freshAtMs(state, offset));
      return latest;
    },
    seen(algorithm) {
      if (!overflowed && !followed.has(algorithm)) {
        if (followed.size >= MOST_FOLLOWED) overflowed = true;
        else followed.add(algorithm);
      }
      return algorithm;
    },
  };
}

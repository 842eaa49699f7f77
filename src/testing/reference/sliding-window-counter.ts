import type { SlidingWindowCounterOptions } from '../../algorithms/sliding-window-counter.js';
import type { Admitted } from './history.js';
import { historyModel } from './history.js';
import type { ReferenceModel } from './types.js';

/**
 * Sliding window counter recounted from the history: windows of `windowMs` follow one another
 * from an anchor, the first admitted request of a key with nothing in its current or previous
 * window. At e ms into window k, used = ⌊count(k − 1) × (windowMs − e) / windowMs⌋ + count(k).
 */
export function slidingWindowCounterReference({ limit, windowMs }: SlidingWindowCounterOptions): ReferenceModel {
  const W = BigInt(windowMs);
  const view = (history: readonly Admitted[], atMs: number) => {
    let anchorMs = atMs;
    let counted: Admitted[] = [];
    const windowOf = (t: number) => Math.floor((t - anchorMs) / windowMs);
    const countIn = (k: number) =>
      counted.filter((r) => windowOf(r.atMs) === k).reduce((sum, request) => sum + request.cost, 0);
    for (const request of history) {
      const k = windowOf(request.atMs);
      if (counted.length === 0 || (countIn(k) === 0 && countIn(k - 1) === 0)) {
        anchorMs = request.atMs;
        counted = [];
      }
      counted.push(request);
    }
    const k = windowOf(atMs);
    const elapsed = BigInt(atMs - anchorMs - k * windowMs);
    return Number((BigInt(countIn(k - 1)) * (W - elapsed)) / W) + countIn(k);
  };
  return historyModel({ limit, horizonMs: 2 * windowMs, used: view });
}

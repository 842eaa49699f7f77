import type { FixedWindowOptions } from '../../algorithms/fixed-window.js';
import { historyModel } from './history.js';
import type { ReferenceModel } from './types.js';

/**
 * Fixed window replayed from the history: a window opens at the first admitted request at or
 * after the previous window's end and lasts `windowMs`; what was admitted in the window that
 * holds `t` is used.
 */
export function fixedWindowReference({ limit, windowMs }: FixedWindowOptions): ReferenceModel {
  return historyModel({
    limit,
    horizonMs: windowMs,
    used(history, atMs) {
      let endMs = Number.NEGATIVE_INFINITY;
      let count = 0;
      for (const request of history) {
        if (request.atMs >= endMs) {
          endMs = request.atMs + windowMs;
          count = 0;
        }
        count += request.cost;
      }
      return atMs < endMs ? count : 0;
    },
  });
}

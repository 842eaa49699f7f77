import type { SlidingWindowLogOptions } from '../../algorithms/sliding-window-log.js';
import { historyModel } from './history.js';
import type { ReferenceModel } from './types.js';

/** Sliding window log as its definition: the units admitted in `(t − windowMs, t]`, counted from the plain list. */
export function slidingWindowLogReference({ limit, windowMs }: SlidingWindowLogOptions): ReferenceModel {
  return historyModel({
    limit,
    horizonMs: windowMs,
    used: (history, atMs) =>
      history.filter((request) => request.atMs > atMs - windowMs).reduce((sum, request) => sum + request.cost, 0),
  });
}

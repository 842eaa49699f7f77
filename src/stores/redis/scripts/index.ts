import type { AlgorithmName } from '../../../algorithms/types.js';
import type { AlgorithmScript } from './compose.js';
import { fixedWindowScript } from './fixed-window.js';
import { gcraScript } from './gcra.js';
import { slidingWindowCounterScript } from './sliding-window-counter.js';
import { slidingWindowLogScript } from './sliding-window-log.js';
import { tokenBucketScript } from './token-bucket.js';

/** The Lua twin of each algorithm core (each with its per-master twin, `perNode`). */
export const scripts: Partial<Record<AlgorithmName, AlgorithmScript>> = {
  gcra: gcraScript,
  'token-bucket': tokenBucketScript,
  'fixed-window': fixedWindowScript,
  'sliding-window-log': slidingWindowLogScript,
  'sliding-window-counter': slidingWindowCounterScript,
};

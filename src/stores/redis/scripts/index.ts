import type { AlgorithmName } from '../../../algorithms/types.js';
import type { LuaScript } from '../script.js';
import { fixedWindowScript } from './fixed-window.js';
import { gcraScript } from './gcra.js';
import { slidingWindowCounterScript } from './sliding-window-counter.js';
import { slidingWindowLogScript } from './sliding-window-log.js';
import { tokenBucketScript } from './token-bucket.js';

/** The Lua twin of each algorithm core. */
export const scripts: Partial<Record<AlgorithmName, LuaScript>> = {
  gcra: gcraScript,
  'token-bucket': tokenBucketScript,
  'fixed-window': fixedWindowScript,
  'sliding-window-log': slidingWindowLogScript,
  'sliding-window-counter': slidingWindowCounterScript,
};

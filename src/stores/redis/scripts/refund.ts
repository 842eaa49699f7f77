import type { AlgorithmName } from '../../../algorithms/types.js';
import type { LuaScript } from '../script.js';
import { refundScript } from './compose.js';
import { gcraLua } from './gcra.js';
import { tokenBucketLua } from './token-bucket.js';

/** Refund scripts by algorithm; an algorithm without one has no `refund` on its Redis limiter. */
export const refundScripts: Partial<Record<AlgorithmName, LuaScript>> = {
  gcra: refundScript(gcraLua),
  'token-bucket': refundScript(tokenBucketLua),
};

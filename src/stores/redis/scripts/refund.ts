import type { AlgorithmName } from '../../../algorithms/types.js';
import type { LuaScript } from '../script.js';
import { adjustScript } from './compose.js';
import { gcraLua } from './gcra.js';
import { tokenBucketLua } from './token-bucket.js';

/** Refund scripts by algorithm; an algorithm without one has no `refund` on its Redis limiter. */
export const refundScripts: Partial<Record<AlgorithmName, LuaScript>> = {
  gcra: adjustScript(gcraLua, 'refund'),
  'token-bucket': adjustScript(tokenBucketLua, 'refund'),
};

/** Charge (debt) scripts by algorithm; an algorithm without one has no `charge` on its Redis limiter. */
export const chargeScripts: Partial<Record<AlgorithmName, LuaScript>> = {
  gcra: adjustScript(gcraLua, 'charge'),
  'token-bucket': adjustScript(tokenBucketLua, 'charge'),
};

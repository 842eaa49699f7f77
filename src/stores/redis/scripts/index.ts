import type { AlgorithmName } from '../../../algorithms/types.js';
import type { LuaScript } from '../script.js';
import { gcraScript } from './gcra.js';

/** The Lua twin of each algorithm core. */
export const scripts: Partial<Record<AlgorithmName, LuaScript>> = {
  gcra: gcraScript,
};

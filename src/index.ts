export { gcra, type GcraOptions } from './algorithms/gcra.js';
export type { Algorithm, AlgorithmName } from './algorithms/types.js';
export type { Decision, DegradedReason, FailureMode, LimitOptions } from './decision.js';
export {
  ConfigError,
  InvalidCostError,
  InvalidKeyError,
  SluiceError,
  StoreUnavailableError,
} from './errors.js';
export { type Clock, type Limiter, monotonicClock, type SyncLimiter } from './limiter.js';
export {
  createMemoryLimiter,
  type MemoryLimiter,
  type MemoryLimiterOptions,
} from './stores/memory/memory-limiter.js';
export { MAX_KEY_BYTES } from './validate.js';

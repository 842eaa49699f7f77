export { MAX_BLOCK_MS } from './admin.js';
export { divideAlgorithm } from './algorithms/divide.js';
export { type FixedWindowOptions, fixedWindow } from './algorithms/fixed-window.js';
export { type GcraOptions, gcra } from './algorithms/gcra.js';
export { type SlidingWindowCounterOptions, slidingWindowCounter } from './algorithms/sliding-window-counter.js';
export { type SlidingWindowLogOptions, slidingWindowLog } from './algorithms/sliding-window-log.js';
export { type TokenBucketOptions, tokenBucket } from './algorithms/token-bucket.js';
export type { Algorithm, AlgorithmName, AlgorithmParams, StateGrowth } from './algorithms/types.js';
export type { Decision, DegradedReason, FailureMode, LimitOptions, ParamsOptions } from './decision.js';
export { forwardOptional, OPTIONAL_LIMITER_MEMBERS } from './decorate.js';
export {
  ClockError,
  ConfigError,
  InvalidCostError,
  InvalidDurationError,
  InvalidKeyError,
  InvalidParamsError,
  isSluiceError,
  ReservationError,
  SluiceError,
  type SluiceErrorCode,
  StoreUnavailableError,
  UnsupportedOperationError,
} from './errors.js';
export { createLeasedLimiter, type LeasedLimiter } from './lease/leased-limiter.js';
export type { LeasedLimiterOptions } from './lease/options.js';
export { emissionIntervalMs } from './lease/remote-model.js';
export type { LeaseStats } from './lease/stats.js';
export {
  type Clock,
  type InvalidationListener,
  type Invalidations,
  type Limiter,
  MAX_CLOCK_MS,
  monotonicClock,
  type SyncLimiter,
} from './limiter.js';
export { createShardedLimiter, type ShardedLimiterOptions } from './shard/shard.js';
export {
  createMemoryLimiter,
  type MemoryLimiter,
  type MemoryLimiterOptions,
} from './stores/memory/memory-limiter.js';
export { MAX_KEY_BYTES } from './validate.js';
export type { SluiceWarning, SluiceWarningCode, WarningSink } from './warnings.js';

export { type AnnouncedLimit, parseRateLimitHeaders, parseRetryAfter } from '../http/headers.js';
export {
  type AcquireOptions,
  type Acquirer,
  type AcquirerOptions,
  createAcquirer,
} from './acquirer.js';
export { AcquirerClosedError, AcquireTimeoutError, CostOverLimitError, QueueFullError } from './errors.js';
export {
  createMemoryPauseStore,
  createRedisPauseStore,
  type PauseStore,
  type RedisPauseStoreOptions,
} from './pauses.js';
export { type ThrottleOptions, throttle } from './throttle.js';
export {
  type HeaderSource,
  learnFromUpstream,
  readUpstream,
  type UpstreamResponse,
  type UpstreamSignal,
} from './upstream.js';

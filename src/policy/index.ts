export type { Decision, DegradedReason, FailureMode, LimitOptions } from '../decision.js';
export type { BreakerOptions, BreakerState } from './breaker.js';
export type { InstanceCount, LocalFallbackOptions } from './fallback.js';
export {
  type DegradedEvent,
  type FailurePolicyOptions,
  type FailureStats,
  type PolicyLimiter,
  type ShadowDenyEvent,
  withFailurePolicy,
} from './with-failure-policy.js';

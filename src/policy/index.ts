export type { Decision, DegradedReason, FailureMode, LimitOptions } from '../decision.js';
export type { BreakerOptions, BreakerState } from './breaker.js';
export type { InstanceCount, LocalFallbackOptions } from './fallback.js';
export type { DegradedEvent, FailurePolicyOptions, ShadowDenyEvent } from './options.js';
export type { FailureStats } from './stats.js';
export { type PolicyLimiter, withFailurePolicy } from './with-failure-policy.js';

export type { Decision, DegradedReason, FailureMode, LimitOptions } from '../decision.js';
export type { BreakerOptions, BreakerState } from './breaker.js';
export { divideAlgorithm } from './divide.js';
export type { InstanceCount, LocalFallbackOptions } from './fallback.js';
export { createHeartbeat, type Heartbeat, type HeartbeatOptions, type HeartbeatStats } from './heartbeat.js';
export {
  type DegradedEvent,
  type FailurePolicyOptions,
  type FailureStats,
  type PolicyLimiter,
  type ShadowDenyEvent,
  withFailurePolicy,
} from './with-failure-policy.js';

export type { ChargeRecord } from '../charge.js';
export type { SluiceWarning, SluiceWarningCode, WarningSink } from '../warnings.js';
export { DEFAULT_IPV6_PREFIX, ipKey } from './client-ip.js';
export { createHttpLimiter, type HttpLimiter, type Verdict } from './core.js';
export type { HttpDegradedChange, HttpDegradedReason } from './degraded.js';
export {
  draft6Headers,
  draft7Headers,
  draft11Headers,
  type HeaderPair,
  type LegacyReset,
  type LimitReport,
  legacyHeaders,
  RATELIMIT_DRAFTS,
  type RateLimitDraft,
  retryAfterHeader,
  retryAfterSeconds,
} from './headers.js';
export type { InFlightHold, InFlightLimiter, InFlightRule } from './in-flight.js';
export type { ChargeResult, ChargeState, ChargeStrategy, RefundableLimiter } from './nested.js';
export { nodeFacts, nodeRateLimit, withRateLimit } from './node.js';
export type {
  CostFunction,
  CostSpec,
  DeniedOutcome,
  HttpLimitOptions,
  LimitRule,
  RequestFacts,
  RequestInfo,
  RoutePolicy,
} from './options.js';
export type { ProxyHeader, TrustProxy } from './proxy.js';
export { type ReservationRule, settleReservation } from './reservations.js';
export type { HttpResponse, ProblemDetails } from './response.js';
export { storageKeyOf } from './storage-key.js';

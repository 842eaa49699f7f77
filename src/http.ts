export { nodeFacts, nodeRateLimit, withRateLimit } from './http/adapters/node.js';
export { DEFAULT_IPV6_PREFIX, ipKey } from './http/client-ip.js';
export { createHttpLimiter, type HttpLimiter, type Verdict } from './http/core.js';
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
} from './http/headers.js';
export type { ChargeResult, ChargeState, ChargeStrategy, RefundableLimiter } from './http/nested.js';
export type {
  CostFunction,
  CostSpec,
  DeniedOutcome,
  HttpLimitOptions,
  LimitRule,
  RequestFacts,
  RequestInfo,
  RoutePolicy,
} from './http/options.js';
export type { ProxyHeader, TrustProxy } from './http/proxy.js';
export type { HttpResponse, ProblemDetails } from './http/response.js';
export type { SluiceWarning, SluiceWarningCode, WarningSink } from './warnings.js';

export type { HttpLimitOptions, LimitRule, RequestInfo, RoutePolicy } from '../options.js';
export { RATE_LIMIT_POLICY, RateLimit, SKIP_RATE_LIMIT, SkipRateLimit } from './decorators.js';
export { RateLimitException, RateLimitFilter } from './exception.js';
export { RateLimitGuard } from './guard.js';
export { SLUICE_OPTIONS, SluiceModule, type SluiceModuleAsyncOptions, type SluiceModuleOptions } from './module.js';

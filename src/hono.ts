export { type HonoRateLimitOptions, rateLimit } from './http/adapters/hono.js';
export type { HttpLimitOptions, LimitRule, RequestInfo, RoutePolicy } from './http/options.js';

export { type HonoRateLimitOptions, rateLimit } from './http/hono/index.js';
export type { HttpLimitOptions, LimitRule, RequestInfo, RoutePolicy } from './http/options.js';

export { type ExpressMiddleware, type ExpressRequest, rateLimit } from './http/adapters/express.js';
export type { HttpLimitOptions, LimitRule, RequestInfo, RoutePolicy } from './http/options.js';

export { type ExpressMiddleware, type ExpressRequest, rateLimit } from './http/express/index.js';
export type { HttpLimitOptions, LimitRule, RequestInfo, RoutePolicy } from './http/options.js';

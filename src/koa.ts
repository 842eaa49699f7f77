export { type KoaContext, rateLimit } from './http/koa/index.js';
export type { HttpLimitOptions, LimitRule, RequestInfo, RoutePolicy } from './http/options.js';

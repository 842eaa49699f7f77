export { type KoaContext, rateLimit } from './http/adapters/koa.js';
export type { HttpLimitOptions, LimitRule, RequestInfo, RoutePolicy } from './http/options.js';

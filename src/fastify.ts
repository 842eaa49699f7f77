export { rateLimit } from './http/fastify/index.js';
export type { HttpLimitOptions, LimitRule, RequestInfo, RoutePolicy } from './http/options.js';

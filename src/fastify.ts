export {
  type FastifyHook,
  type FastifyRateLimitOptions,
  type FastifyRoutePolicy,
  rateLimit,
} from './http/adapters/fastify.js';
export type { HttpLimitOptions, LimitRule, RequestInfo, RoutePolicy } from './http/options.js';

import type { IncomingMessage, ServerResponse } from 'node:http';
import { createHttpLimiter } from '../core.js';
import { nodeFacts, sendNodeResponse, setNodeHeaders } from '../node.js';
import type { HttpLimitOptions } from '../options.js';

/** The parts of an Express 4/5 request the adapter reads (structural, so no @types/express is needed). */
export type ExpressRequest = IncomingMessage & {
  originalUrl?: string;
  route?: { path?: unknown };
  app?: { get?(setting: string): unknown };
};

/** An Express 4 or 5 middleware function. */
export type ExpressMiddleware = (req: ExpressRequest, res: ServerResponse, next: (error?: unknown) => void) => void;

/**
 * Express 4/5 middleware: `app.use(rateLimit({ limiter }))`, or per route
 * `app.post('/login', rateLimit({ ... }), handler)` (then `routeId` is the route pattern).
 * `routes` entries match paths as the app routes them: its `case sensitive routing` and
 * `strict routing` settings, unless `routeMatching` is given.
 * Reads the socket address and its own `trustProxy`, not Express's `trust proxy` setting.
 * Errors of user functions go to `next(error)`.
 * @throws {ConfigError} on invalid options.
 */
export function rateLimit(options: HttpLimitOptions<ExpressRequest>): ExpressMiddleware {
  const limiter = createHttpLimiter(options);
  const matchingOf = options.routeMatching === undefined ? appMatching : () => undefined;
  return (req, res, next) => {
    const routeId = typeof req.route?.path === 'string' ? req.route.path : undefined;
    const facts = { ...nodeFacts(req, req.originalUrl ?? req.url, routeId), routeMatching: matchingOf(req) };
    limiter.check(facts).then((verdict) => {
      if (verdict.action === 'respond') return sendNodeResponse(res, verdict.response);
      setNodeHeaders(res, verdict.headers);
      next();
    }, next);
  };
}

/** How the app's router compares paths (both settings default to false in Express 4 and 5). */
function appMatching(req: ExpressRequest) {
  const get = req.app?.get;
  if (typeof get !== 'function') return undefined;
  return {
    caseSensitive: Boolean(get.call(req.app, 'case sensitive routing')),
    strict: Boolean(get.call(req.app, 'strict routing')),
  };
}

export type { HttpLimitOptions, LimitRule, RequestInfo, RoutePolicy } from '../options.js';

import type { IncomingMessage, ServerResponse } from 'node:http';
import { createHttpLimiter, type Verdict } from '../core.js';
import { nodeFacts, sendNodeResponse, setNodeHeaders, settleOnClose } from '../node.js';
import type { HttpLimitOptions } from '../options.js';
import type { RouteMatching } from '../routes.js';

/** The parts of an Express 4/5 request the adapter reads (structural, so no @types/express is needed). */
export type ExpressRequest = IncomingMessage & {
  originalUrl?: string;
  route?: { path?: unknown };
  app?: { get?(setting: string): unknown };
};

/** An Express 4 or 5 middleware function over `Req` (default: the structural {@link ExpressRequest}). */
export type ExpressMiddleware<Req extends ExpressRequest = ExpressRequest> = (
  req: Req,
  res: ServerResponse,
  next: (error?: unknown) => void,
) => void;

/**
 * Express 4/5 middleware: `app.use(rateLimit({ limiter }))`, or per route
 * `app.post('/login', rateLimit({ ... }), handler)` (then `routeId` is the route pattern).
 * `routes` entries match paths as the app routes them: its `case sensitive routing` and
 * `strict routing` settings (read once per app), unless `routeMatching` is given.
 * Reads the socket address and its own `trustProxy`, not Express's `trust proxy` setting.
 * Errors of user functions go to `next(error)`. Key, cost and skip functions see `Req`: give
 * your request type to read what earlier middleware added (`rateLimit<express.Request>`: the
 * parsed `body`, an authenticated `user`).
 * @throws {ConfigError} on invalid options.
 * @example
 * ```ts
 * import express from 'express';
 * import { createMemoryLimiter, gcra } from 'sluice';
 * import { rateLimit } from 'sluice/express';
 *
 * const perMinute = (limit: number) => createMemoryLimiter({ algorithm: gcra({ limit, periodMs: 60_000 }) });
 * const app = express();
 * app.use(rateLimit({ limiter: perMinute(60) }));
 * app.post('/login', rateLimit({ limiter: perMinute(5), failure: 'closed' }), (req, res) => {
 *   res.send('welcome');
 * });
 * ```
 */
export function rateLimit<Req extends ExpressRequest = ExpressRequest>(
  options: HttpLimitOptions<Req>,
): ExpressMiddleware<Req> {
  const limiter = createHttpLimiter(options);
  // Only `routes` entries compare paths; the option, when given, replaces the app's settings.
  const readsApp = options.routeMatching === undefined && Object.keys(options.routes ?? {}).length > 0;
  return (req, res, next) => {
    const routeId = typeof req.route?.path === 'string' ? req.route.path : undefined;
    const facts = nodeFacts(req, req.originalUrl ?? req.url, routeId);
    if (readsApp) {
      const matching = appMatching(req.app);
      if (matching !== undefined) facts.routeMatching = matching;
    }
    const verdict = limiter.decide(facts);
    if (verdict instanceof Promise) verdict.then((settled) => apply(settled, res, next), next);
    else apply(verdict, res, next);
  };
}

function apply(verdict: Verdict, res: ServerResponse, next: (error?: unknown) => void): void {
  if (verdict.action === 'respond') {
    sendNodeResponse(res, verdict.response);
    return;
  }
  setNodeHeaders(res, verdict.headers);
  if (verdict.settle) settleOnClose(res, verdict.settle);
  next();
}

type ExpressApp = NonNullable<ExpressRequest['app']>;

const matchingByApp = new WeakMap<ExpressApp, Required<RouteMatching>>();

/**
 * How the app's router compares paths (both settings default to false in Express 4 and 5), read
 * once per app: Express reads them once too, when it creates the app's router (at its first
 * `use` or route, before any request), so a later `app.set` changes neither.
 */
function appMatching(app: ExpressRequest['app']): Required<RouteMatching> | undefined {
  if (app === undefined || typeof app.get !== 'function') return undefined;
  let matching = matchingByApp.get(app);
  if (matching === undefined) {
    matching = {
      caseSensitive: Boolean(app.get('case sensitive routing')),
      strict: Boolean(app.get('strict routing')),
    };
    matchingByApp.set(app, matching);
  }
  return matching;
}

export type { HttpLimitOptions, LimitRule, RequestInfo, RoutePolicy } from '../options.js';

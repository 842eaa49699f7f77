import type { Context, MiddlewareHandler } from 'hono';
import { ConfigError } from '../../errors.js';
import { requireOptions } from '../../validate.js';
import { createHttpLimiter } from '../core.js';
import type { HttpLimitOptions } from '../options.js';

/** Options of the Hono adapter: the shared options plus how to read the client's socket address. */
export interface HonoRateLimitOptions extends HttpLimitOptions<Context> {
  /**
   * The socket peer address, which the web-standard `Request` does not carry. On Node:
   * `(c) => getConnInfo(c).remote.address` with `getConnInfo` from `@hono/node-server/conninfo`
   * (`hono/bun`, `hono/deno`, `hono/cloudflare-workers` export the same helper).
   */
  clientAddress: (c: Context) => string | undefined;
}

/**
 * The pattern of the first handler Hono matched after this middleware: `app.use` entries are
 * method `ALL`, handlers carry their method. Hono matches every route before the first runs.
 */
function handlerRoute(c: Context): string | undefined {
  const routes = c.req.matchedRoutes;
  return routes.slice(c.req.routeIndex + 1).find((route) => route.method !== 'ALL')?.path;
}

/**
 * Hono middleware over the web-standard `Request`, so it runs on any runtime Hono does:
 * `app.use(rateLimit({ limiter, clientAddress }))`. Errors of user functions reject into
 * Hono's `onError`.
 * @throws {ConfigError} on invalid options (including a missing `clientAddress`).
 */
export function rateLimit(options: HonoRateLimitOptions): MiddlewareHandler {
  const { clientAddress } = requireOptions('rateLimit options', options);
  if (typeof clientAddress !== 'function') {
    throw new ConfigError('clientAddress is required: a function (c) => socket address, e.g. from getConnInfo');
  }
  const limiter = createHttpLimiter(options);
  return async (c, next) => {
    const verdict = await limiter.check({
      request: c,
      method: c.req.method,
      path: c.req.path,
      routeId: handlerRoute(c),
      header: (name) => c.req.header(name),
      remoteAddress: clientAddress(c),
    });
    if (verdict.action === 'respond') {
      const { status, headers, body } = verdict.response;
      return new Response(body, { status, headers: headers as [string, string][] });
    }
    await next();
    // After next(): Hono copies headers into a finalized Response (set before, a handler returning
    // its own `new Response()` would drop them).
    for (const [name, value] of verdict.headers) c.header(name, value);
  };
}
export type { HttpLimitOptions, LimitRule, RequestInfo, RoutePolicy } from '../options.js';

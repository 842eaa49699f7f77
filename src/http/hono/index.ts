import type { Context, Env, MiddlewareHandler } from 'hono';
import { ConfigError } from '../../errors.js';
import { requireOptions } from '../../validate.js';
import { createHttpLimiter } from '../core.js';
import { joinHeader } from '../headers.js';
import type { HttpLimitOptions } from '../options.js';
import { withBodyEnd } from './body-end.js';

/**
 * Options of the Hono adapter: the shared options plus how to read the client's socket address.
 * `E` is the app's Hono environment, so key functions read typed variables (`c.get('user')`).
 */
// biome-ignore lint/suspicious/noExplicitAny: Hono's own default environment (what a bare `Context` means)
export interface HonoRateLimitOptions<E extends Env = any> extends HttpLimitOptions<Context<E>> {
  /**
   * The socket peer address, which the web-standard `Request` does not carry. On Node:
   * `(c) => getConnInfo(c).remote.address` with `getConnInfo` from `@hono/node-server/conninfo`
   * (`hono/bun`, `hono/deno`, `hono/cloudflare-workers` export the same helper).
   */
  clientAddress: (c: Context<E>) => string | undefined;
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
 * Hono's `onError`. A key function may read the body with `await c.req.json()`: Hono keeps the
 * parsed body for the handler.
 * @throws {ConfigError} on invalid options (including a missing `clientAddress`).
 * @example
 * ```ts
 * import { getConnInfo } from '@hono/node-server/conninfo';
 * import { Hono } from 'hono';
 * import { createMemoryLimiter, gcra } from 'sluice';
 * import { rateLimit } from 'sluice/hono';
 *
 * const app = new Hono();
 * app.use(
 *   rateLimit({
 *     limiter: createMemoryLimiter({ algorithm: gcra({ limit: 60, periodMs: 60_000 }) }),
 *     clientAddress: (c) => getConnInfo(c).remote.address,
 *   }),
 * );
 * app.get('/', (c) => c.text('hello'));
 * ```
 */
// biome-ignore lint/suspicious/noExplicitAny: Hono's own default environment (what a bare `Context` means)
export function rateLimit<E extends Env = any>(options: HonoRateLimitOptions<E>): MiddlewareHandler<E> {
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
    // A route's own rateLimit (inner) may have answered or set its RateLimit lists: add to them.
    for (const [name, value] of verdict.headers) c.header(name, joinHeader(name, c.res.headers.get(name), value));
    // Settle (and release in-flight holds) when the body was sent to its end, a streamed one
    // included; not completed when the client hung up before the handler returned or mid-body.
    const { settle } = verdict;
    if (settle === undefined) return;
    if (c.req.raw.signal.aborted) return void settle(undefined);
    const { status } = c.res;
    c.res = withBodyEnd(c.res, (completed) => void settle(completed ? status : undefined));
  };
}
export type { HttpLimitOptions, LimitRule, RequestInfo, RoutePolicy } from '../options.js';

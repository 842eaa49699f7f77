import type { IncomingMessage } from 'node:http';
import { createHttpLimiter } from '../core.js';
import { nodeFacts } from '../node.js';
import type { HttpLimitOptions } from '../options.js';

/** The parts of a Koa 2/3 context the adapter uses (structural, so no @types/koa is needed). */
export interface KoaContext {
  req: IncomingMessage;
  originalUrl: string;
  status: number;
  body: unknown;
  set(field: string, value: string): void;
  /** Set by @koa/router to the matched route pattern. */
  _matchedRoute?: string | RegExp;
}

/**
 * Koa middleware: `app.use(rateLimit({ limiter }))`. Reads the socket address and its own
 * `trustProxy`, not `app.proxy`. Errors of user functions reject into Koa's error handling.
 * @throws {ConfigError} on invalid options.
 */
export function rateLimit<Ctx extends KoaContext>(
  options: HttpLimitOptions<Ctx>,
): (ctx: Ctx, next: () => Promise<unknown>) => Promise<void> {
  const limiter = createHttpLimiter(options);
  return async (ctx, next) => {
    const routeId = typeof ctx._matchedRoute === 'string' ? ctx._matchedRoute : undefined;
    const facts = { ...nodeFacts(ctx.req, ctx.originalUrl, routeId), request: ctx };
    const verdict = await limiter.check(facts);
    if (verdict.action === 'respond') {
      const { status, headers, body } = verdict.response;
      ctx.status = status;
      for (const [name, value] of headers) ctx.set(name, value);
      ctx.body = body; // after Content-Type, so Koa keeps it
      return;
    }
    for (const [name, value] of verdict.headers) ctx.set(name, value);
    await next();
  };
}
export type { HttpLimitOptions, LimitRule, RequestInfo, RoutePolicy } from '../options.js';

import type { IncomingMessage, ServerResponse } from 'node:http';
import { createHttpLimiter } from '../core.js';
import { joinHeader } from '../headers.js';
import { nodeFacts, settleOnClose } from '../node.js';
import type { HttpLimitOptions } from '../options.js';

/** The parts of a Koa 2/3 context the adapter uses (structural, so no @types/koa is needed). */
export interface KoaContext {
  req: IncomingMessage;
  res: ServerResponse;
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
 * @example
 * ```ts
 * import Koa from 'koa';
 * import { createMemoryLimiter, gcra } from 'sluice';
 * import { rateLimit } from 'sluice/koa';
 *
 * const app = new Koa();
 * app.use(rateLimit({ limiter: createMemoryLimiter({ algorithm: gcra({ limit: 60, periodMs: 60_000 }) }) }));
 * app.use((ctx) => {
 *   ctx.body = 'hello';
 * });
 * ```
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
      for (const [name, value] of headers) ctx.set(name, joinHeader(name, ctx.res.getHeader(name), value));
      ctx.body = body; // after Content-Type, so Koa keeps it
      return;
    }
    for (const [name, value] of verdict.headers) ctx.set(name, joinHeader(name, ctx.res.getHeader(name), value));
    if (verdict.settle) settleOnClose(ctx.res, verdict.settle);
    await next();
  };
}
export type { HttpLimitOptions, LimitRule, RequestInfo, RoutePolicy } from '../options.js';

import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { ConfigError } from '../../errors.js';
import { createHttpLimiter, type HttpLimiter, type Verdict } from '../core.js';
import { joinHeader } from '../headers.js';
import { settleOnClose } from '../node.js';
import type { HttpLimitOptions, RoutePolicy } from '../options.js';

/**
 * The request hooks the limiter can run in: `onRequest` (default; before body parsing, the
 * cheapest denial), `preValidation` (the body is parsed: keys may read `request.body`) or
 * `preHandler` (after validation and the route's own auth hooks: keys may read `request.user`).
 */
export type FastifyHook = 'onRequest' | 'preValidation' | 'preHandler';

const HOOKS: readonly FastifyHook[] = ['onRequest', 'preValidation', 'preHandler'];

/** A per-route Sluice policy in Fastify: the shared {@link RoutePolicy} plus the hook it runs in. */
export interface FastifyRoutePolicy extends RoutePolicy<FastifyRequest> {
  /** The hook this route is limited in, instead of the plugin's `hook`. */
  hook?: FastifyHook;
}

/** Options of the Fastify plugin: the shared options plus the hook it runs in. */
export interface FastifyRateLimitOptions extends HttpLimitOptions<FastifyRequest> {
  /** The hook every route is limited in, unless its `config.rateLimit.hook` says otherwise. Default `onRequest`. */
  hook?: FastifyHook;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Per-route Sluice policy (`{ cost, failure, limits, skip, hook }`), or `false` to exempt the route. */
    rateLimit?: FastifyRoutePolicy | false;
  }
}

/**
 * Fastify 5 plugin: `await app.register(rateLimit, { limiter })`. It applies to every route
 * of the instance it is registered on (not encapsulated), as an `onRequest` hook by default, so
 * a denied request never reaches body parsing; `hook: 'preValidation'` (or `'preHandler'`), for
 * the plugin or one route (`config: { rateLimit: { hook } }`), lets keys read the parsed body or
 * `request.user`. Per-route policy goes in the route's `config: { rateLimit: { ... } }`, or
 * `false` to exempt it. Reads the socket address and its own `trustProxy`, not Fastify's.
 * Errors of user functions reject into Fastify's error handler. When the app is ready, `routes`
 * entries that match no registered route raise warning `SLUICE_HTTP_ROUTE_UNREACHABLE`.
 * @throws {ConfigError} (rejecting `register`) on invalid options, including an unknown `hook`.
 * @example
 * ```ts
 * import Fastify from 'fastify';
 * import { createMemoryLimiter, gcra } from 'sluice';
 * import { rateLimit } from 'sluice/fastify';
 *
 * const app = Fastify();
 * await app.register(rateLimit, { limiter: createMemoryLimiter({ algorithm: gcra({ limit: 60, periodMs: 60_000 }) }) });
 * app.get('/health', { config: { rateLimit: false } }, async () => 'ok');
 * app.post('/report', { config: { rateLimit: { cost: 5 } } }, async () => 'queued');
 * ```
 */
export const rateLimit: FastifyPluginAsync<FastifyRateLimitOptions> = async (fastify: FastifyInstance, options) => {
  const limiter = createHttpLimiter(options);
  const hook = checkHook(options.hook ?? 'onRequest');
  const registered: [string, string][] = [];
  const limitOwnHook = (request: FastifyRequest, reply: FastifyReply, done: HookDone) =>
    limitRequest(limiter, request, request.routeOptions, reply, done);
  fastify.addHook('onRoute', (route) => {
    const policy = route.config?.rateLimit;
    if (policy) {
      limiter.checkRoute(policy); // an invalid route config fails at startup, not at its first request
      if (policy.hook !== undefined && checkHook(policy.hook) !== hook) {
        const hooks = route as unknown as Record<FastifyHook, unknown>;
        hooks[policy.hook] = [hooks[policy.hook] ?? [], limitOwnHook].flat();
      }
    }
    for (const method of [route.method].flat()) registered.push([method, route.url]);
  });
  fastify.addHook('onReady', async () => limiter.checkRegistered(registered));
  // Callback-style hooks: a verdict decided synchronously goes on without a Promise.
  fastify.addHook(hook, (request: FastifyRequest, reply: FastifyReply, done: HookDone) => {
    const route = request.routeOptions; // a getter that builds a new object on every read
    const policy = route.config?.rateLimit;
    if (policy && policy.hook !== undefined && policy.hook !== hook)
      done(); // limited in its own hook
    else limitRequest(limiter, request, route, reply, done);
  });
};

type HookDone = (error?: Error) => void;

function limitRequest(
  limiter: HttpLimiter<FastifyRequest>,
  request: FastifyRequest,
  route: FastifyRequest['routeOptions'],
  reply: FastifyReply,
  done: HookDone,
): void {
  const query = request.url.search(/[?#]/);
  const verdict = limiter.decide(
    {
      request,
      method: request.method,
      path: query === -1 ? request.url : request.url.slice(0, query),
      routeId: route.url,
      header(name) {
        const value = request.headers[name];
        return Array.isArray(value) ? value.join(', ') : value;
      },
      remoteAddress: request.raw.socket?.remoteAddress,
    },
    route.config?.rateLimit,
  );
  if (verdict instanceof Promise) verdict.then((settled) => apply(settled, reply, done), done);
  else apply(verdict, reply, done);
}

/** Continues with the rate-limit headers set, or sends the denial (and then never calls `done`). */
function apply(verdict: Verdict, reply: FastifyReply, done: HookDone): void {
  if (verdict.action === 'continue') {
    for (const [name, value] of verdict.headers) reply.header(name, joinHeader(name, reply.getHeader(name), value));
    if (verdict.settle) settleOnClose(reply.raw, verdict.settle);
    done();
    return;
  }
  const { status, headers, body } = verdict.response;
  for (const [name, value] of headers) reply.header(name, joinHeader(name, reply.getHeader(name), value));
  reply.code(status).send(body);
}

function checkHook(hook: unknown): FastifyHook {
  if (HOOKS.includes(hook as FastifyHook)) return hook as FastifyHook;
  throw new ConfigError(`hook must be one of ${HOOKS.join(', ')}, got ${String(hook)}`);
}

// What fastify-plugin does: hooks apply to the registering instance, not a child context.
Object.assign(rateLimit, { [Symbol.for('skip-override')]: true, [Symbol.for('fastify.display-name')]: 'sluice' });

export type { HttpLimitOptions, LimitRule, RequestInfo, RoutePolicy } from '../options.js';

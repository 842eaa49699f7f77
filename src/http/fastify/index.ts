import type { FastifyInstance, FastifyPluginAsync, FastifyRequest } from 'fastify';
import { createHttpLimiter } from '../core.js';
import type { HttpLimitOptions, RoutePolicy } from '../options.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Per-route Sluice policy (`{ cost, failure, limits, skip }`), or `false` to exempt the route. */
    rateLimit?: RoutePolicy<FastifyRequest> | false;
  }
}

/**
 * Fastify 5 plugin: `await app.register(rateLimit, { limiter })`. It applies to every route
 * of the instance it is registered on (not encapsulated), as an `onRequest` hook, so a denied
 * request never reaches body parsing. Per-route policy goes in the route's
 * `config: { rateLimit: { ... } }`, or `false` to exempt it. Reads the socket address and its
 * own `trustProxy`, not Fastify's. Errors of user functions reject into Fastify's error handler.
 * When the app is ready, `routes` entries that match no registered route raise warning
 * `SLUICE_HTTP_ROUTE_UNREACHABLE`.
 * @throws {ConfigError} (rejecting `register`) on invalid options.
 */
export const rateLimit: FastifyPluginAsync<HttpLimitOptions<FastifyRequest>> = async (
  fastify: FastifyInstance,
  options,
) => {
  const limiter = createHttpLimiter(options);
  const registered: [string, string][] = [];
  fastify.addHook('onRoute', (route) => {
    const policy = route.config?.rateLimit;
    if (policy) limiter.checkRoute(policy); // an invalid route config fails at startup, not at its first request
    for (const method of [route.method].flat()) registered.push([method, route.url]);
  });
  fastify.addHook('onReady', async () => limiter.checkRegistered(registered));
  fastify.addHook('onRequest', async (request, reply) => {
    const query = request.url.search(/[?#]/);
    const verdict = await limiter.check(
      {
        request,
        method: request.method,
        path: query === -1 ? request.url : request.url.slice(0, query),
        routeId: request.routeOptions.url,
        header(name) {
          const value = request.headers[name];
          return Array.isArray(value) ? value.join(', ') : value;
        },
        remoteAddress: request.raw.socket?.remoteAddress,
      },
      request.routeOptions.config?.rateLimit,
    );
    if (verdict.action === 'continue') {
      for (const [name, value] of verdict.headers) reply.header(name, value);
      return;
    }
    const { status, headers, body } = verdict.response;
    for (const [name, value] of headers) reply.header(name, value);
    return reply.code(status).send(body);
  });
};

// What fastify-plugin does: hooks apply to the registering instance, not a child context.
Object.assign(rateLimit, { [Symbol.for('skip-override')]: true, [Symbol.for('fastify.display-name')]: 'sluice' });

export type { HttpLimitOptions, LimitRule, RequestInfo, RoutePolicy } from '../options.js';

import type { CanActivate, ExecutionContext } from '@nestjs/common';
import type { Reflector } from '@nestjs/core';
import { createHttpLimiter, type HttpLimiter } from '../core.js';
import { settleOnClose } from '../node.js';
import type { HttpLimitOptions, RoutePolicy } from '../options.js';
import { RATE_LIMIT_POLICY, SKIP_RATE_LIMIT } from './decorators.js';
import { RateLimitException } from './exception.js';
import { platformFacts, rawResponse, setPlatformHeaders } from './platform.js';

type Policy = RoutePolicy<ExecutionContext>;

/**
 * The guard `SluiceModule` installs app-wide: HTTP requests only (WebSocket and microservice
 * contexts pass). Per request: `@SkipRateLimit()` → pass; else the handler's and controller's
 * `@RateLimit` policy, merged, is the route policy of the one Sluice core every adapter shares.
 * Admitted: headers set, `true`. Denied: headers set, {@link RateLimitException} thrown.
 */
export class RateLimitGuard implements CanActivate {
  readonly #http: HttpLimiter<ExecutionContext>;
  readonly #reflector: Reflector;
  // One merged policy object per handler, so the core's per-policy rule cache holds.
  readonly #policies = new WeakMap<object, Policy | undefined>();

  /** @throws {ConfigError} on invalid options. */
  constructor(options: HttpLimitOptions<ExecutionContext>, reflector: Reflector) {
    this.#http = createHttpLimiter(options);
    this.#reflector = reflector;
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (context.getType() !== 'http') return true;
    const targets = [context.getHandler(), context.getClass()];
    if (this.#reflector.getAllAndOverride<boolean>(SKIP_RATE_LIMIT, targets)) return true;
    const http = context.switchToHttp();
    const response = http.getResponse<unknown>();
    const verdict = await this.#http.check(platformFacts(http.getRequest(), context), this.#policyOf(context));
    if (verdict.action === 'respond') {
      setPlatformHeaders(
        response,
        verdict.response.headers.filter(([name]) => name.toLowerCase() !== 'content-type'),
      );
      throw new RateLimitException(verdict.response);
    }
    setPlatformHeaders(response, verdict.headers);
    if (verdict.settle) settleOnClose(rawResponse(response), verdict.settle);
    return true;
  }

  #policyOf(context: ExecutionContext): Policy | undefined {
    const handler = context.getHandler();
    if (this.#policies.has(handler)) return this.#policies.get(handler);
    const own = this.#reflector.get<Policy | undefined>(RATE_LIMIT_POLICY, handler);
    const inherited = this.#reflector.get<Policy | undefined>(RATE_LIMIT_POLICY, context.getClass());
    const policy = own && inherited ? { ...inherited, ...own } : (own ?? inherited);
    if (policy) this.#http.checkRoute(policy);
    this.#policies.set(handler, policy);
    return policy;
  }
}

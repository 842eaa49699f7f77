import { type CustomDecorator, type ExecutionContext, SetMetadata } from '@nestjs/common';
import type { RoutePolicy } from '../options.js';

/** Metadata key of `@RateLimit(...)`: the route policy of a controller or handler. */
export const RATE_LIMIT_POLICY = 'sluice:rate-limit-policy';
/** Metadata key of `@SkipRateLimit()`. */
export const SKIP_RATE_LIMIT = 'sluice:skip-rate-limit';

/**
 * What one controller or handler changes: `cost` (a number, per limit name, or a function),
 * `failure` (`'open'`, `'closed'`, `'fallback'`), extra `limits` charged with the module's all
 * or nothing, `countWhen`/`resetWhen`. On both a controller and its handler, the handler's fields
 * win and the controller's others stay. Key and cost functions see the `ExecutionContext`.
 * @example
 * ```ts
 * import { Controller, Get, Post } from '@nestjs/common';
 * import { createMemoryLimiter, gcra } from 'sluice';
 * import { RateLimit } from 'sluice/nestjs';
 *
 * const logins = createMemoryLimiter({ algorithm: gcra({ limit: 5, periodMs: 15 * 60_000 }) });
 *
 * @Controller('auth')
 * @RateLimit({ failure: 'closed' })
 * export class AuthController {
 *   @Post('login')
 *   @RateLimit({ limits: [{ name: 'login', limiter: logins }], countWhen: (status) => status >= 400 })
 *   login() {
 *     return 'welcome';
 *   }
 *
 *   @Get('report')
 *   @RateLimit({ cost: 10 })
 *   report() {
 *     return 'report';
 *   }
 * }
 * ```
 */
export function RateLimit(policy: RoutePolicy<ExecutionContext>): CustomDecorator<string> {
  return SetMetadata(RATE_LIMIT_POLICY, policy);
}

/**
 * The controller or handler is not limited and gets no headers.
 * @example
 * ```ts
 * import { Controller, Get } from '@nestjs/common';
 * import { SkipRateLimit } from 'sluice/nestjs';
 *
 * @Controller('health')
 * @SkipRateLimit()
 * export class HealthController {
 *   @Get()
 *   check() {
 *     return 'ok';
 *   }
 * }
 * ```
 */
export function SkipRateLimit(): CustomDecorator<string> {
  return SetMetadata(SKIP_RATE_LIMIT, true);
}

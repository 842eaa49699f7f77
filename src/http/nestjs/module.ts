import type { DynamicModule, ExecutionContext, InjectionToken, ModuleMetadata } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, Reflector } from '@nestjs/core';
import type { HttpLimitOptions } from '../options.js';
import { RateLimitFilter } from './exception.js';
import { RateLimitGuard } from './guard.js';

/** The options of `SluiceModule`: every option of the other adapters; key functions see the ExecutionContext. */
export type SluiceModuleOptions = HttpLimitOptions<ExecutionContext>;

/** The injection token of the module's options. */
export const SLUICE_OPTIONS = 'sluice:module-options';

/** `SluiceModule.forRootAsync`: options built by a factory, e.g. from a Redis client provider. */
export interface SluiceModuleAsyncOptions extends Pick<ModuleMetadata, 'imports'> {
  useFactory: (...args: never[]) => SluiceModuleOptions | Promise<SluiceModuleOptions>;
  /** Explicit tokens for the factory's arguments (no `emitDecoratorMetadata` needed). */
  inject?: InjectionToken[];
}

/**
 * Rate limiting for a NestJS app on the Express or the Fastify platform: installs
 * {@link RateLimitGuard} app-wide (`APP_GUARD`) and the filter that sends its denials as the
 * other adapters do (`APP_FILTER`). Per controller or handler: `@RateLimit(...)`,
 * `@SkipRateLimit()`. Every provider is a factory with explicit tokens, so nothing needs
 * `emitDecoratorMetadata`.
 * @example
 * ```ts
 * import { Module } from '@nestjs/common';
 * import { createMemoryLimiter, gcra } from 'sluice';
 * import { SluiceModule } from 'sluice/nestjs';
 *
 * const perMinute = (limit: number) => createMemoryLimiter({ algorithm: gcra({ limit, periodMs: 60_000 }) });
 *
 * @Module({ imports: [SluiceModule.forRoot({ limits: [{ name: 'per-ip', limiter: perMinute(100) }] })] })
 * export class AppModule {}
 * ```
 */
// biome-ignore lint/complexity/noStaticOnlyClass: a Nest dynamic module is a class with static factories.
export class SluiceModule {
  /** @throws {ConfigError} (when the app starts) on invalid options. */
  static forRoot(options: SluiceModuleOptions): DynamicModule {
    return SluiceModule.forRootAsync({ useFactory: () => options });
  }

  /**
   * Options from a factory, its arguments injected by explicit tokens.
   * @example
   * ```ts
   * import { Module } from '@nestjs/common';
   * import { Redis } from 'ioredis';
   * import { gcra } from 'sluice';
   * import { SluiceModule } from 'sluice/nestjs';
   * import { createRedisLimiter } from 'sluice/redis';
   *
   * @Module({
   *   providers: [{ provide: 'REDIS', useFactory: () => new Redis() }],
   *   exports: ['REDIS'],
   * })
   * class RedisModule {}
   *
   * @Module({
   *   imports: [
   *     SluiceModule.forRootAsync({
   *       imports: [RedisModule],
   *       inject: ['REDIS'],
   *       useFactory: (client: Redis) => ({
   *         limiter: createRedisLimiter({ client, algorithm: gcra({ limit: 100, periodMs: 60_000 }) }),
   *       }),
   *     }),
   *   ],
   * })
   * export class AppModule {}
   * ```
   */
  static forRootAsync(options: SluiceModuleAsyncOptions): DynamicModule {
    return {
      module: SluiceModule,
      imports: options.imports ?? [],
      providers: [
        { provide: SLUICE_OPTIONS, useFactory: options.useFactory, inject: options.inject ?? [] },
        {
          provide: RateLimitGuard,
          useFactory: (resolved: SluiceModuleOptions, reflector: Reflector) => new RateLimitGuard(resolved, reflector),
          inject: [SLUICE_OPTIONS, Reflector],
        },
        { provide: APP_GUARD, useExisting: RateLimitGuard },
        { provide: APP_FILTER, useValue: new RateLimitFilter() },
      ],
      exports: [RateLimitGuard],
    };
  }
}

import 'reflect-metadata';
import type { AddressInfo } from 'node:net';
import {
  Body,
  Controller,
  Get,
  HttpCode,
  type INestApplication,
  Module,
  Post,
  type Type,
  UnauthorizedException,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gcra } from '../../src/algorithms/gcra.js';
import { ConfigError } from '../../src/errors.js';
import { RateLimit, SkipRateLimit, SluiceModule, type SluiceModuleOptions } from '../../src/http/nestjs/index.js';
import type { Limiter } from '../../src/limiter.js';
import { createMemoryLimiter } from '../../src/stores/memory/memory-limiter.js';
import { postJson, send } from '../http/support/client.js';
import { deadRedis } from '../http/support/dead-redis.js';
import { manualClock } from '../http/support/scenarios.js';
import { freePort } from '../support/redis-server.js';

/*
 * sluice/nestjs on both Nest platforms, through real HTTP: the module's app-wide guard, the
 * decorators per controller and handler, keys from the execution context (body, user set by
 * the platform's auth step, IP), and the same headers and problem+json bodies as the other adapters.
 */
const limiterOf = (limit: number, periodMs = 60_000): Limiter =>
  createMemoryLimiter({ algorithm: gcra({ limit, periodMs }), clock: manualClock().read, pruneIntervalMs: 0 });

type Authed = { user?: { id: string } };
type LoginBody = { username?: string; password?: string };

interface Run {
  perIp: Limiter;
  logins: Limiter;
  perUser: Limiter;
  handled: Map<string, number>;
}

function appModule(run: Run, dead: Limiter) {
  const hit = (path: string) => run.handled.set(path, (run.handled.get(path) ?? 0) + 1);

  @Controller()
  class ApiController {
    @Get('hello')
    hello() {
      hit('/hello');
      return 'ok';
    }

    @Get('report')
    @RateLimit({ cost: 5 })
    report() {
      return 'report';
    }

    @Get('me')
    @RateLimit({
      limits: [
        {
          name: 'per-user',
          limiter: run.perUser,
          key: (r) => r.request.switchToHttp().getRequest<Authed>().user?.id ?? null,
        },
      ],
    })
    me() {
      return 'me';
    }

    @Post('pay')
    @HttpCode(200)
    @RateLimit({ failure: 'closed', limits: [{ name: 'payments', limiter: dead }] })
    pay() {
      return 'paid';
    }
  }

  @Controller('auth')
  @RateLimit({ countWhen: (status) => status >= 400 })
  class AuthController {
    @Post('login')
    @HttpCode(200)
    @RateLimit({
      limits: [
        {
          name: 'login',
          limiter: run.logins,
          key: (r) => {
            const body = r.request.switchToHttp().getRequest<{ body?: LoginBody }>().body;
            return typeof body?.username === 'string' ? `${body.username}@${r.ipKey}` : null;
          },
        },
      ],
    })
    login(@Body() body: LoginBody) {
      hit('/auth/login');
      if (body.password !== 'right') throw new UnauthorizedException();
      return 'welcome';
    }
  }

  @Controller('votes')
  class VoteController {
    // A JSON body is attacker-shaped: `voter` may be a number or an object, never coerced to a shared key.
    @Post()
    @HttpCode(200)
    @RateLimit({
      limits: [
        {
          name: 'per-voter',
          limiter: run.perUser,
          key: (r) => r.request.switchToHttp().getRequest<{ body?: { voter?: string } }>().body?.voter,
        },
      ],
    })
    vote() {
      hit('/votes');
      return 'counted';
    }
  }

  @Controller('health')
  @SkipRateLimit()
  class HealthController {
    @Get()
    check() {
      return 'ok';
    }
  }

  const options: SluiceModuleOptions = { limits: [{ name: 'per-ip', limiter: run.perIp }], onWarning: false };

  @Module({
    imports: [SluiceModule.forRoot(options)],
    controllers: [ApiController, AuthController, VoteController, HealthController],
  })
  class AppModule {}
  return AppModule;
}

/** Sets request.user from `x-user`, as an auth middleware would, where each platform keeps it. */
const platforms = [
  {
    name: 'express',
    async create(module: Type) {
      const app = await NestFactory.create(module, new ExpressAdapter(), { logger: false });
      app.use((req: Authed & { headers: Record<string, string> }, _res: unknown, next: () => void) => {
        if (req.headers['x-user']) req.user = { id: req.headers['x-user'] };
        next();
      });
      return app;
    },
  },
  {
    name: 'fastify',
    async create(module: Type) {
      const app = await NestFactory.create(module, new FastifyAdapter(), { logger: false });
      const fastify = app.getHttpAdapter().getInstance();
      fastify.addHook('onRequest', async (request: Authed & { headers: Record<string, string> }) => {
        if (request.headers['x-user']) request.user = { id: request.headers['x-user'] };
      });
      return app;
    },
  },
] as const;

let dead: ReturnType<typeof deadRedis>;
beforeAll(async () => {
  dead = deadRedis(await freePort());
});
afterAll(() => dead?.close());

describe.each(platforms)('NestJS on $name', (platform) => {
  const start = async (run: Run): Promise<{ app: INestApplication; url: string }> => {
    const app = await platform.create(appModule(run, dead.limiter()));
    await app.listen(0, '127.0.0.1');
    const { port } = app.getHttpServer().address() as AddressInfo;
    return { app, url: `http://127.0.0.1:${port}` };
  };
  const fresh = (): Run => ({
    perIp: limiterOf(100),
    logins: limiterOf(5, 15 * 60_000),
    perUser: limiterOf(2),
    handled: new Map(),
  });
  const withApp = async (body: (url: string, run: Run) => Promise<void>) => {
    const run = fresh();
    const started = await start(run);
    try {
      await body(started.url, run);
    } finally {
      await started.app.close();
    }
  };

  it('app-wide per-IP limit: draft-11 headers; a 429 is the problem+json of every adapter', async () => {
    await withApp(async (url, run) => {
      const first = await send(`${url}/hello`);
      expect(first.status).toBe(200);
      expect(first.headers.get('ratelimit-policy')).toBe('"per-ip";q=100;w=60');
      expect(first.headers.get('ratelimit')).toBe('"per-ip";r=99;t=1');
      await run.perIp.limit('per-ip:ip:127.0.0.1', { cost: 99 });
      const denied = await send(`${url}/hello`);
      expect(denied.status).toBe(429);
      expect(denied.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(denied.headers.get('retry-after')).toBe('1');
      expect(denied.headers.get('ratelimit')).toBe('"per-ip";r=0;t=60');
      expect(JSON.parse(denied.body)).toEqual({
        type: 'about:blank',
        title: 'Too Many Requests',
        status: 429,
        detail: 'Rate limit "per-ip" exceeded; retry in 1 s.',
        limit: 'per-ip',
        retryAfter: 1,
      });
      expect(run.handled.get('/hello')).toBe(1);
    });
  });

  it('@SkipRateLimit() on a controller: no limit, no headers; @RateLimit({ cost: 5 }) on a handler', async () => {
    await withApp(async (url) => {
      const health = await send(`${url}/health`);
      expect(health.status).toBe(200);
      expect(health.headers.get('ratelimit')).toBeNull();
      expect((await send(`${url}/report`)).headers.get('ratelimit')).toBe('"per-ip";r=95;t=3');
    });
  });

  it('login keyed by the JSON body username + IP, 5 per 15 min: 6th 429 names login; another username 200', async () => {
    await withApp(async (url, run) => {
      const attempt = (username: string, password = 'wrong') => postJson(`${url}/auth/login`, { username, password });
      const statuses = [];
      for (let i = 0; i < 6; i++) statuses.push((await attempt('alice')).status);
      expect(statuses).toEqual([401, 401, 401, 401, 401, 429]);
      const denied = await attempt('alice');
      expect(denied.headers.get('ratelimit-policy')).toBe('"per-ip";q=100;w=60, "login";q=5;w=900');
      expect(denied.headers.get('retry-after')).toBe('180');
      expect(JSON.parse(denied.body)).toMatchObject({ status: 429, limit: 'login', retryAfter: 180 });
      expect((await attempt('bob', 'right')).status).toBe(200);
      expect(run.handled.get('/auth/login')).toBe(6);
    });
  });

  it('count by outcome from the controller: successes are given back; 50 parallel failures vs 5 → 5 handled', async () => {
    await withApp(async (url, run) => {
      for (let i = 0; i < 3; i++) {
        expect((await postJson(`${url}/auth/login`, { username: 'carol', password: 'right' })).status).toBe(200);
      }
      await expect.poll(async () => (await run.logins.peek('login:id:carol@127.0.0.1')).remaining).toBe(5);
      run.handled.clear();
      const burst = await Promise.all(
        Array.from({ length: 50 }, () => postJson(`${url}/auth/login`, { username: 'mallory', password: 'x' })),
      );
      expect(burst.filter((reply) => reply.status === 401)).toHaveLength(5);
      expect(burst.filter((reply) => reply.status === 429)).toHaveLength(45);
      expect(run.handled.get('/auth/login')).toBe(5);
    });
  });

  it('a key from the authenticated user: per user, and not applied without one', async () => {
    await withApp(async (url) => {
      const as = (user?: string) => send(`${url}/me`, user ? { headers: { 'x-user': user } } : {});
      expect((await as('u1')).headers.get('ratelimit')).toBe('"per-ip";r=99;t=1, "per-user";r=1;t=30');
      expect((await as('u1')).status).toBe(200);
      expect((await as('u1')).status).toBe(429);
      expect((await as('u2')).status).toBe(200);
      const anonymous = await as();
      expect(anonymous.status).toBe(200);
      expect(anonymous.headers.get('ratelimit')).toMatch(/^"per-ip";r=\d+;t=\d+$/);
    });
  });

  it('a key function returning a number or an object from the body: 500, handler not run, nothing shared', async () => {
    await withApp(async (url, run) => {
      const statuses = [];
      for (const voter of [7, { id: 'v1' }, 7]) statuses.push((await postJson(`${url}/votes`, { voter })).status);
      expect(statuses).toEqual([500, 500, 500]);
      expect(run.handled.get('/votes')).toBeUndefined();
      expect((await postJson(`${url}/votes`, { voter: 'v1' })).status).toBe(200);
      expect((await run.perUser.peek('per-voter:id:v1')).remaining).toBe(1);
    });
  });

  it("failure 'closed' on a handler whose store is down: 503 problem+json, the handler not run", async () => {
    await withApp(async (url) => {
      const reply = await send(`${url}/pay`, { method: 'POST' });
      expect(reply.status).toBe(503);
      expect(reply.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(JSON.parse(reply.body)).toMatchObject({
        status: 503,
        title: 'Service Unavailable',
        reason: 'store-unavailable',
      });
    });
  });
});

describe('SluiceModule options', () => {
  @Controller()
  class HelloController {
    @Get('hello')
    hello() {
      return 'ok';
    }
  }

  it('forRootAsync: options from a factory whose limiter another module provides by an explicit token', async () => {
    const limiter = limiterOf(3);
    @Module({ providers: [{ provide: 'LIMITER', useValue: limiter }], exports: ['LIMITER'] })
    class LimiterModule {}
    @Module({
      imports: [
        SluiceModule.forRootAsync({
          imports: [LimiterModule],
          inject: ['LIMITER'],
          useFactory: async (injected: Limiter) => ({ limiter: injected }),
        }),
      ],
      controllers: [HelloController],
    })
    class AppModule {}
    const app = await NestFactory.create(AppModule, new ExpressAdapter(), { logger: false });
    await app.listen(0, '127.0.0.1');
    try {
      const { port } = app.getHttpServer().address() as AddressInfo;
      expect((await send(`http://127.0.0.1:${port}/hello`)).headers.get('ratelimit')).toBe('"default";r=2;t=20');
      expect((await limiter.peek('default:ip:127.0.0.1')).remaining).toBe(2);
    } finally {
      await app.close();
    }
  });

  it('invalid options fail the app at startup with ConfigError naming the option', async () => {
    @Module({ imports: [SluiceModule.forRoot({ limiter: limiterOf(1), headers: 'draft-99' as never })] })
    class AppModule {}
    await expect(
      NestFactory.create(AppModule, new ExpressAdapter(), { logger: false, abortOnError: false }),
    ).rejects.toThrow(ConfigError);
  });
});

import fc from 'fast-check';
import { describe, it } from 'vitest';
import { rateLimit as expressRateLimit } from '../../src/http/express/index.js';
import { rateLimit as honoRateLimit } from '../../src/http/hono/index.js';
import { createHttpLimiter, nodeRateLimit } from '../../src/http/index.js';
import { rateLimit as koaRateLimit } from '../../src/http/koa/index.js';
import {
  createLeasedLimiter,
  createMemoryLimiter,
  createShardedLimiter,
  divideAlgorithm,
  fixedWindow,
  gcra,
  type Limiter,
  SluiceError,
  slidingWindowCounter,
  slidingWindowLog,
  tokenBucket,
} from '../../src/index.js';
import { withFailurePolicy } from '../../src/policy/index.js';
import { createHeartbeat, createRedisLimiter } from '../../src/stores/redis/index.js';
import { useRedisServer } from '../support/redis-server.js';

/*
 * Every public factory, fed arbitrary JSON-ish options (undefined, null, NaN, strings, huge
 * numbers, objects, arrays, functions, and sometimes a valid value), either builds or throws one
 * of Sluice's typed errors: never a TypeError or RangeError from deep inside.
 */

const { redis } = useRedisServer();

const RUNS = Number(process.env.FUZZ_RUNS ?? 200);

/** Values a careless or hostile caller might pass for any option. */
const junk: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(
    undefined,
    null,
    Number.NaN,
    Number.POSITIVE_INFINITY,
    Number.NEGATIVE_INFINITY,
    0,
    -1,
    0.5,
    1,
    2,
    100,
    60_000,
    2 ** 31 - 1,
    2 ** 31,
    2 ** 53,
    Number.MAX_VALUE,
    '',
    'x',
    '10',
    'server',
    'client',
    'open',
    'closed',
    'fallback',
    true,
    false,
    {},
    [],
    () => 1,
    Symbol('junk'),
    10n,
  ),
  fc.anything({ maxDepth: 2 }),
);

/** An options bag with the factory's fields, each junk or (as often) one of `valid`'s values. */
function optionsOf(fields: Record<string, fc.Arbitrary<unknown>>): fc.Arbitrary<unknown> {
  const record = Object.fromEntries(Object.entries(fields).map(([name, valid]) => [name, fc.oneof(junk, valid)]));
  return fc.oneof({ weight: 1, arbitrary: junk }, { weight: 4, arbitrary: fc.record(record, { requiredKeys: [] }) });
}

const smallInt = fc.integer({ min: 1, max: 1000 });
const anyAlgorithm = fc.constantFrom(
  gcra({ limit: 10, periodMs: 1000 }),
  tokenBucket({ capacity: 10, rate: 5, periodMs: 1000 }),
  fixedWindow({ limit: 10, windowMs: 1000 }),
  slidingWindowLog({ limit: 10, windowMs: 1000 }),
  slidingWindowCounter({ limit: 10, windowMs: 1000 }),
);
const memoryLimiter = () => createMemoryLimiter({ algorithm: gcra({ limit: 10, periodMs: 1000 }), pruneIntervalMs: 0 });
const limiterArb = fc.constant(null).map(() => memoryLimiter());
const clockArb = fc.constant(() => 0);

/** Runs `build` and accepts a result or a SluiceError; anything else fails the property. */
function typedOnly<T>(build: () => T): T | undefined {
  try {
    return build();
  } catch (error) {
    if (error instanceof SluiceError) return undefined;
    throw error;
  }
}

async function typedOnlyAsync<T>(run: () => Promise<T>): Promise<void> {
  try {
    await run();
  } catch (error) {
    if (!(error instanceof SluiceError)) throw error;
  }
}

const closers: Limiter[] = [];
const closeAll = () => Promise.all(closers.splice(0).map((l) => l.close()));

describe('every factory throws only typed errors for arbitrary options', () => {
  const algorithms = [
    ['gcra', gcra, { limit: smallInt, periodMs: smallInt, burst: smallInt }],
    ['tokenBucket', tokenBucket, { capacity: smallInt, rate: smallInt, periodMs: smallInt }],
    ['fixedWindow', fixedWindow, { limit: smallInt, windowMs: smallInt }],
    ['slidingWindowLog', slidingWindowLog, { limit: smallInt, windowMs: smallInt }],
    ['slidingWindowCounter', slidingWindowCounter, { limit: smallInt, windowMs: smallInt }],
  ] as const;
  for (const [name, factory, fields] of algorithms) {
    it(name, () => {
      fc.assert(
        fc.property(optionsOf(fields), (options) => {
          typedOnly(() => factory(options as never));
        }),
        { numRuns: RUNS },
      );
    });
  }

  it('createMemoryLimiter, then limit/peek/refund with arbitrary keys and costs', async () => {
    const fields = { algorithm: anyAlgorithm, maxKeys: smallInt, clock: clockArb, pruneIntervalMs: smallInt };
    await fc.assert(
      fc.asyncProperty(optionsOf(fields), junk, junk, async (options, key, cost) => {
        const limiter = typedOnly(() => createMemoryLimiter(options as never));
        if (limiter === undefined) return;
        closers.push(limiter);
        await typedOnlyAsync(() => limiter.limit(key as string, { cost } as never));
        await typedOnlyAsync(() => limiter.limit(key as string, cost as never));
        await typedOnlyAsync(() => limiter.peek(key as string));
        if (limiter.refund)
          await typedOnlyAsync(() => limiter.refund?.(key as string, cost as number) as Promise<void>);
      }),
      { numRuns: RUNS },
    );
    await closeAll();
  });

  it('createRedisLimiter (real redis-server), then limit with arbitrary keys and costs', async () => {
    const fields = {
      client: fc.constant(null).map(() => redis()),
      algorithm: anyAlgorithm,
      prefix: fc.constant('fuzz:'),
      clock: fc.constantFrom('server', 'client', () => 1_700_000_000_000),
      batch: fc.oneof(fc.boolean(), fc.record({ maxDecisions: smallInt, bySlot: fc.boolean() }, { requiredKeys: [] })),
    };
    await fc.assert(
      fc.asyncProperty(optionsOf(fields), junk, junk, async (options, key, cost) => {
        const limiter = typedOnly(() => createRedisLimiter(options as never));
        if (limiter === undefined) return;
        closers.push(limiter);
        await typedOnlyAsync(() => limiter.limit(key as string, { cost } as never));
      }),
      { numRuns: RUNS },
    );
    await closeAll();
  });

  it('createLeasedLimiter', async () => {
    const fields = {
      remote: limiterArb,
      leaseSize: smallInt,
      adaptive: fc.boolean(),
      adaptiveDivisor: smallInt,
      returnIdleMs: smallInt,
      returnCheckIntervalMs: smallInt,
      maxKeys: smallInt,
      clock: clockArb,
    };
    fc.assert(
      fc.property(optionsOf(fields), (options) => {
        const limiter = typedOnly(() => createLeasedLimiter(options as never));
        if (limiter) closers.push(limiter);
      }),
      { numRuns: RUNS },
    );
    await closeAll();
  });

  it('withFailurePolicy', async () => {
    const fields = {
      failure: fc.constantFrom('open', 'closed', 'fallback'),
      fallback: fc.record({ instances: smallInt, maxKeys: smallInt }, { requiredKeys: [] }),
      deadlineMs: smallInt,
      breaker: fc.record({ failureThreshold: smallInt, coolDownMs: smallInt }, { requiredKeys: [] }),
      shadow: fc.boolean(),
      onDegraded: fc.constant(() => {}),
      onShadowDeny: fc.constant(() => {}),
      onWarning: fc.oneof(
        fc.constant(false),
        fc.constant(() => {}),
        junk,
      ),
      clock: clockArb,
    };
    fc.assert(
      fc.property(fc.oneof(junk, limiterArb), optionsOf(fields), (limiter, options) => {
        const policy = typedOnly(() => withFailurePolicy(limiter as never, options as never));
        if (policy) closers.push(policy);
      }),
      { numRuns: RUNS },
    );
    await closeAll();
  });

  it('createHeartbeat (real redis-server)', async () => {
    const fields = {
      client: fc.constant(null).map(() => redis()),
      name: fc.constant('fuzz'),
      prefix: fc.constant('fuzz:instances:'),
      instanceId: fc.string({ minLength: 1 }),
      intervalMs: fc.integer({ min: 100, max: 10_000 }),
      ttlMs: fc.integer({ min: 101, max: 100_000 }),
      assumeInstances: smallInt,
      clock: fc.constantFrom('server', 'client'),
    };
    const beating: { close(): Promise<void> }[] = [];
    fc.assert(
      fc.property(optionsOf(fields), (options) => {
        const heartbeat = typedOnly(() => createHeartbeat(options as never));
        if (heartbeat) beating.push(heartbeat);
      }),
      { numRuns: RUNS },
    );
    await Promise.all(beating.map((h) => h.close()));
  });

  it('createShardedLimiter and divideAlgorithm', () => {
    const fields = {
      algorithm: anyAlgorithm,
      shards: fc.integer({ min: 2, max: 20 }),
      create: fc.constant((algorithm: never) => createMemoryLimiter({ algorithm, pruneIntervalMs: 0 })),
    };
    fc.assert(
      fc.property(optionsOf(fields), fc.oneof(junk, anyAlgorithm), junk, (options, algorithm, n) => {
        typedOnly(() => createShardedLimiter(options as never));
        typedOnly(() => divideAlgorithm(algorithm as never, n as never));
      }),
      { numRuns: RUNS },
    );
  });

  it('createHttpLimiter and the Express, Koa, node:http and Hono factories; checkRoute', () => {
    const limit = fc.constant(null).map(() => ({ limiter: memoryLimiter() }));
    const fields = {
      limiter: limiterArb,
      limits: fc.oneof(limit, fc.array(limit, { maxLength: 2 })),
      trustProxy: fc.constantFrom(false, true, 1, 'loopback', ['10.0.0.0/8']),
      proxyHeader: fc.constantFrom('x-forwarded-for', 'forwarded'),
      ipv6Prefix: fc.constantFrom(48, 56, 64, 128),
      headers: fc.constantFrom('draft-6', 'draft-7', 'draft-11', false),
      legacyHeaders: fc.constantFrom(true, false, 'delta', 'epoch'),
      headerLimits: fc.constantFrom('all', 'closest'),
      failure: fc.constantFrom('open', 'closed', 'fallback'),
      skip: fc.constant(() => false),
      allowList: fc.constant(['127.0.0.1']),
      routes: fc.dictionary(fc.string(), fc.record({ skip: fc.boolean(), cost: smallInt }, { requiredKeys: [] })),
      problemType: fc.constant('about:blank'),
      respond: fc.constant(() => ({ status: 429, headers: [], body: '' })),
      onWarning: fc.constant(false),
      onStoreError: fc.constant(() => {}),
      epochClock: fc.constant(Date.now),
    };
    const factories: ((options: never) => unknown)[] = [
      createHttpLimiter,
      expressRateLimit,
      koaRateLimit,
      nodeRateLimit,
    ];
    const honoOptions = optionsOf({ ...fields, clientAddress: fc.constant(() => '127.0.0.1') });
    fc.assert(
      fc.property(optionsOf(fields), honoOptions, junk, (options, hono, route) => {
        for (const factory of factories) typedOnly(() => factory(options as never));
        typedOnly(() => honoRateLimit(hono as never));
        const http = typedOnly(() => createHttpLimiter(options as never));
        if (http) typedOnly(() => http.checkRoute(route as never));
      }),
      { numRuns: RUNS },
    );
  });
});

import { describe, expect, it } from 'vitest';
import { createConcurrencyLimiter, memoryHolds, redisHolds, reserve } from '../../src/concurrency/index.js';
import { rateLimit } from '../../src/http/express/index.js';
import { createHttpLimiter } from '../../src/http/index.js';
import {
  ConfigError,
  createLeasedLimiter,
  createMemoryLimiter,
  createShardedLimiter,
  fixedWindow,
  gcra,
  InvalidCostError,
  slidingWindowCounter,
  slidingWindowLog,
  tokenBucket,
} from '../../src/index.js';
import { createAcquirer, throttle } from '../../src/outbound/index.js';
import { withFailurePolicy } from '../../src/policy/index.js';
import { createHeartbeat, createRedisLimiter } from '../../src/stores/redis/index.js';

const memory = () =>
  createMemoryLimiter({ algorithm: gcra({ limit: 10, periodMs: 1000 }), clock: () => 0, pruneIntervalMs: 0 });

/** Runs `build` and returns what it threw (so the test can check type and message). */
function thrownBy(build: () => unknown): unknown {
  try {
    build();
  } catch (error) {
    return error;
  }
  return undefined;
}

describe('factories called without options throw ConfigError, not TypeError (issue 12 item 6)', () => {
  const builders = { gcra, tokenBucket, fixedWindow, slidingWindowLog, slidingWindowCounter };
  for (const [name, builder] of Object.entries(builders)) {
    it(`${name}() and ${name}(null)`, () => {
      for (const options of [undefined, null]) {
        const error = thrownBy(() => builder(options as never));
        expect(error).toBeInstanceOf(ConfigError);
        expect((error as Error).message).toMatch(/options/);
      }
    });
  }

  it.each<[string, () => unknown]>([
    ['createMemoryLimiter()', () => createMemoryLimiter(undefined as never)],
    ['createRedisLimiter()', () => createRedisLimiter(undefined as never)],
    ['createLeasedLimiter()', () => createLeasedLimiter(undefined as never)],
    ['createHeartbeat()', () => createHeartbeat(undefined as never)],
    ['withFailurePolicy(undefined)', () => withFailurePolicy(undefined as never)],
    ['withFailurePolicy(limiter, null)', () => withFailurePolicy(memory(), null as never)],
  ])('%s', (_name, build) => {
    expect(thrownBy(build)).toBeInstanceOf(ConfigError);
  });
});

describe('bad options are rejected at construction, naming the option (issue 12 item 6)', () => {
  it.each<[string, () => unknown, RegExp]>([
    ['memory algorithm: {}', () => createMemoryLimiter({ algorithm: {} as never }), /^algorithm must be an Algorithm/],
    [
      'redis algorithm: {}',
      () => createRedisLimiter({ client: { evalsha: async () => 0, eval: async () => 0 }, algorithm: {} as never }),
      /^algorithm must be an Algorithm/,
    ],
    [
      "memory clock: 'x'",
      () => createMemoryLimiter({ algorithm: gcra({ limit: 1, periodMs: 1 }), clock: 'x' as never }),
      /^clock must be a function/,
    ],
    ["policy clock: 'x'", () => withFailurePolicy(memory(), { clock: 'x' as never }), /^clock must be a function/],
    ['burst: null', () => gcra({ limit: 10, periodMs: 1000, burst: null as never }), /^burst must be an integer/],
    [
      'maxKeys: null',
      () => createMemoryLimiter({ algorithm: gcra({ limit: 1, periodMs: 1 }), maxKeys: null as never }),
      /^maxKeys must be an integer/,
    ],
    ['deadlineMs: null', () => withFailurePolicy(memory(), { deadlineMs: null as never }), /^deadlineMs must be/],
    ['breaker: 5', () => withFailurePolicy(memory(), { breaker: 5 as never }), /^breaker must be an options object/],
    ['shadow: "yes"', () => withFailurePolicy(memory(), { shadow: 'yes' as never }), /^shadow must be a boolean/],
    ['onDegraded: 1', () => withFailurePolicy(memory(), { onDegraded: 1 as never }), /^onDegraded must be a function/],
    [
      'leased remote: undefined',
      () => createLeasedLimiter({ remote: undefined as never, leaseSize: 1 }),
      /^remote must be a Limiter/,
    ],
  ])('%s', (_name, build, message) => {
    const error = thrownBy(build);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(message);
  });
});

describe('cost: null rejects with InvalidCostError instead of costing 1 (issue 12 item 6)', () => {
  it('memory, synchronous and asynchronous', async () => {
    const limiter = memory();
    expect(() => limiter.limitSync('k', { cost: null as never })).toThrow(InvalidCostError);
    await expect(limiter.limit('k', { cost: null as never })).rejects.toBeInstanceOf(InvalidCostError);
    expect(limiter.peekSync('k').remaining).toBe(10);
  });

  it('leased and policy-wrapped', async () => {
    const leased = createLeasedLimiter({ remote: memory(), leaseSize: 2 });
    expect(() => leased.tryLimit('k', { cost: null as never })).toThrow(InvalidCostError);
    await expect(leased.limit('k', { cost: null as never })).rejects.toBeInstanceOf(InvalidCostError);
    const policy = withFailurePolicy(memory());
    await expect(policy.limit('k', { cost: null as never })).rejects.toBeInstanceOf(InvalidCostError);
  });
});

describe('a rate finer than the stores hold is a ConfigError that names the finest rate (issue 12 item 6)', () => {
  it('gcra({ limit: 2 ** 31, periodMs: 1 }): the emission interval would be 1 µs, a 2-million-fold slower rate', () => {
    const error = thrownBy(() => gcra({ limit: 2 ** 31, periodMs: 1 }));
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(/finest rate is 1 unit per µs \(limit at most periodMs × 1000 = 1000\)/);
  });

  it('the boundary: 1000 per ms is held exactly, 1001 per ms is refused', () => {
    const finest = createMemoryLimiter({ algorithm: gcra({ limit: 1000, periodMs: 1 }), clock: () => 0 });
    let admitted = 0;
    while (finest.limitSync('k').allowed) admitted++;
    expect(admitted).toBe(1000);
    expect(() => gcra({ limit: 1001, periodMs: 1 })).toThrow(ConfigError);
    expect(() => gcra({ limit: 60_000_001, periodMs: 60_000 })).toThrow(ConfigError);
    expect(gcra({ limit: 60_000_000, periodMs: 60_000 }).scriptParams[0]).toBe(1);
  });

  it('the token bucket and the windows count in whole units, so no rate is too fine for them', () => {
    const bucket = createMemoryLimiter({
      algorithm: tokenBucket({ capacity: 10, rate: 2 ** 31, periodMs: 1 }),
      clock: () => 0,
    });
    expect(bucket.limitSync('k', { cost: 10 }).allowed).toBe(true);
    expect(fixedWindow({ limit: 2 ** 31, windowMs: 1 }).limit).toBe(2 ** 31);
    expect(slidingWindowCounter({ limit: 2 ** 31, windowMs: 1 }).limit).toBe(2 ** 31);
  });
});

describe('a misspelt or unknown option is a ConfigError naming it, not silently its default', () => {
  const client = { evalsha: async () => 0, eval: async () => 0 };
  const algorithm = gcra({ limit: 10, periodMs: 1000 });
  // Each call passes one name the factory does not know, as plain JavaScript would.
  it.each<[string, () => unknown, RegExp]>([
    ['gcra burts', () => gcra({ limit: 1, periodMs: 1000, burts: 2 } as never), /gcra options: unknown option 'burts'/],
    ['tokenBucket', () => tokenBucket({ capacity: 1, rate: 1, periodMs: 1, limit: 1 } as never), /'limit'/],
    ['fixedWindow', () => fixedWindow({ limit: 1, windowMS: 1000 } as never), /did you mean 'windowMs'\?/],
    ['slidingWindowLog', () => slidingWindowLog({ limit: 1, windowMs: 1, x: 1 } as never), /'x'/],
    ['slidingWindowCounter', () => slidingWindowCounter({ limit: 1, windowMs: 1, x: 1 } as never), /'x'/],
    ['memory maxkeys', () => createMemoryLimiter({ algorithm, maxkeys: 5 } as never), /did you mean 'maxKeys'\?/],
    ['redis prefx', () => createRedisLimiter({ client, algorithm, prefx: 'x' } as never), /unknown option 'prefx'/],
    [
      'redis batch maxdecisions',
      () => createRedisLimiter({ client, algorithm, batch: { maxdecisions: 2 } } as never),
      /did you mean 'maxDecisions'\?/,
    ],
    ['heartbeat', () => createHeartbeat({ client, interval: 1000 } as never), /unknown option 'interval'/],
    ['leased', () => createLeasedLimiter({ remote: memory(), leaseSize: 1, lease: 2 } as never), /'lease'/],
    ['policy failOpen', () => withFailurePolicy(memory(), { failOpen: true } as never), /unknown option 'failOpen'/],
    [
      'policy breaker',
      () => withFailurePolicy(memory(), { breaker: { threshold: 1 } } as never),
      /breaker: unknown option 'threshold'/,
    ],
    ['sharded', () => createShardedLimiter({ algorithm, shards: 2, create: () => memory(), x: 1 } as never), /'x'/],
    ['concurrency', () => createConcurrencyLimiter({ limit: 1, holdMS: 1000 } as never), /did you mean 'holdMs'\?/],
    ['memoryHolds', () => memoryHolds({ maxkeys: 1 } as never), /did you mean 'maxKeys'\?/],
    ['redisHolds', () => redisHolds({ client, prefx: 'x' } as never), /'prefx'/],
    ['acquirer', () => createAcquirer(memory(), { maxQueue: 1 } as never), /unknown option 'maxQueue'/],
    [
      'throttle',
      () => throttle(async () => 1, { limiter: memory(), key: 'k', maxwaitms: 1 } as never),
      /did you mean 'maxWaitMs'\?/,
    ],
    [
      'http trustproxy',
      () => createHttpLimiter({ limiter: memory(), trustproxy: true } as never),
      /did you mean 'trustProxy'\?/,
    ],
    [
      'express trustproxy',
      () => rateLimit({ limiter: memory(), trustproxy: true } as never),
      /did you mean 'trustProxy'\?/,
    ],
    [
      'a limit rule',
      () => createHttpLimiter({ limits: [{ name: 'login', limiter: memory(), countwhen: () => true }] } as never),
      /limit "login": unknown option 'countwhen' \(did you mean 'countWhen'\?\)/,
    ],
    [
      'a route policy',
      () => createHttpLimiter({ limiter: memory(), routes: { 'POST /login': { Cost: 5 } } } as never),
      /a route policy: unknown option 'Cost' \(did you mean 'cost'\?\)/,
    ],
  ])('%s', (_name, build, message) => {
    const error = thrownBy(build);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(message);
  });

  it('reserve rejects, charging nothing', async () => {
    const limiter = memory();
    await expect(reserve(limiter, 'k', 1, { ttl: 1 } as never)).rejects.toThrow(
      /reserve options: unknown option 'ttl'/,
    );
    expect((await limiter.peek('k')).remaining).toBe(10);
  });
});

import assert from 'node:assert/strict';
import type FastCheck from 'fast-check';
import type { Algorithm, AlgorithmName } from '../algorithms/types.js';
import type { Decision } from '../decision.js';
import type { Limiter } from '../limiter.js';
import { type ManualClock, manualClock } from './clock.js';
import { type AlgorithmProfile, type PropertyName, profiles } from './profiles.js';
import { decidePartially } from './reference/partial.js';
import { type ReservationPropertyName, reservationProperties } from './reservation-properties.js';

/** The test-registration functions of the host framework (vitest, jest, node:test, mocha). */
export interface TestApi {
  describe(name: string, body: () => void): unknown;
  it(name: string, body: () => Promise<void>): unknown;
}

/** A limiter implementation to hold to the suite: a store, a wrapper, a third-party backend. */
export interface ConformanceTarget {
  /** Shown in test names. */
  name: string;
  /**
   * A limiter for `algorithm` that reads time only from `clock`. Limiters created with
   * different `connection` numbers (0..3) must share state, through separate connections
   * where the store has them; the suite uses them to race one key from several clients.
   *
   * The clock is manual: it jumps and stands still. A store that also expires state on its own
   * real-time clock (Redis TTLs) must keep keys alive for the duration of the test, or a key
   * written with a few ms to live may vanish between two calls at the same manual time (Sluice's
   * own Redis targets append a long PEXPIRE to each script in tests; their TTLs are tested apart).
   */
  create(algorithm: Algorithm, clock: ManualClock, connection: number): Limiter | Promise<Limiter>;
  test: TestApi;
  /** Algorithms this target supports; default every profile in {@link profiles}. */
  algorithms?: readonly AlgorithmName[];
  /**
   * Properties this target does not meet, each with the reason (for example a leasing layer that
   * trails its remote's exact `remaining` by design). Declared here, never by skipping a test.
   */
  exempt?: Partial<Record<PropertyName, string>>;
  /** Random schedules per algorithm in the reference-model property; default 25. */
  propertyRuns?: number;
  /**
   * Optional abilities the target has, each held to its own property: `'partial'`, partial
   * admission (`limit(key, { cost, partial: true })`, property `partial-admission`). A target
   * that does not declare one is not tested for it. Default none.
   */
  capabilities?: readonly Capability[];
}

/** An optional ability of a limiter that the suite tests only when a target declares it. */
export type Capability = 'partial';

const LIMIT = 5;
const PERIOD_MS = 10_000;
const INTERVAL_MS = PERIOD_MS / LIMIT;

interface Setup {
  limiter: Limiter;
  clock: ManualClock;
  key: string;
  exhaust(): Promise<void>;
}

let keySequence = 0;
const uniqueKey = () => `conformance:${++keySequence}:${Math.random().toString(36).slice(2, 10)}`;

/**
 * Registers the conformance suite for `target`: every property below, for every algorithm the
 * target supports, except those an algorithm's profile declares exempt (with its reason, in
 * `profiles.ts`). Assertions use `node:assert`, so any test framework can host it. The
 * reference-model property needs the optional peer fast-check, loaded when that test runs.
 * @example
 * ```ts
 * import { createMemoryLimiter } from 'sluice';
 * import { runConformance } from 'sluice/testing';
 * import { describe, it } from 'vitest';
 *
 * runConformance({
 *   name: 'memory',
 *   test: { describe, it },
 *   create: (algorithm, clock) => createMemoryLimiter({ algorithm, clock: clock.now }),
 * });
 * ```
 */
export function runConformance(target: ConformanceTarget): void {
  const { describe, it } = target.test;
  const selected = profiles.filter((p) => !target.algorithms || target.algorithms.includes(p.name));
  describe(`conformance: ${target.name}`, () => {
    for (const profile of selected) {
      describe(profile.name, () => {
        for (const [name, check] of Object.entries(properties) as [PropertyName, Check][]) {
          if (profile.exempt[name] || target.exempt?.[name]) continue;
          // Rest parameters: a host that reads the body's arity (jest) sees no done callback.
          it(name, async (...args: unknown[]) => check({ target, profile, skip: skipperOf(args[0]) }));
        }
        for (const capability of target.capabilities ?? []) {
          const [name, check] = byCapability[capability];
          if (profile.exempt[name] || target.exempt?.[name]) continue;
          it(name, async (...args: unknown[]) => check({ target, profile, skip: skipperOf(args[0]) }));
        }
      });
    }
  });
}

type Check = (context: CheckContext) => Promise<void>;

interface CheckContext {
  target: ConformanceTarget;
  profile: AlgorithmProfile;
  /** Marks the test skipped with `reason` where the host can (vitest, node:test); else it passes. */
  skip(reason: string): void;
}

/** The host's own skip from the test's context argument (vitest's `context.skip`, node:test's `t.skip`). */
function skipperOf(context: unknown): (reason: string) => void {
  const skip = (context as { skip?: unknown } | undefined)?.skip;
  return typeof skip === 'function' ? (reason) => skip.call(context, reason) : () => {};
}

/** Whether `limiter` has the optional `member`; when not, the test is skipped with that reason. */
function lacks(limiter: Limiter, member: keyof Limiter, skip: (reason: string) => void): boolean {
  if (limiter[member] !== undefined) return false;
  skip(`the limiter has no ${member}`);
  return true;
}

async function setup(
  target: ConformanceTarget,
  profile: AlgorithmProfile,
  limit = LIMIT,
  periodMs = PERIOD_MS,
): Promise<Setup> {
  const clock = manualClock();
  const limiter = await target.create(profile.build(limit, periodMs), clock, 0);
  const key = uniqueKey();
  return {
    limiter,
    clock,
    key,
    async exhaust() {
      assert.equal((await limiter.limit(key, { cost: limit })).allowed, true, 'a fresh key admits its limit at once');
    },
  };
}

async function withSetup(
  { target, profile }: Pick<CheckContext, 'target' | 'profile'>,
  body: (s: Setup) => Promise<void>,
): Promise<void> {
  const s = await setup(target, profile);
  try {
    await body(s);
  } finally {
    await s.limiter.close();
  }
}

/** Waits (real time, up to 5 s) for `condition`: notifications between connections take a round trip. */
async function until(condition: () => boolean, what: string): Promise<void> {
  for (let waitedMs = 0; !condition(); waitedMs += 5) {
    if (waitedMs >= 5_000) assert.fail(`${what} within 5 s`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

async function rejectsWithCode(promise: Promise<unknown>, code: string): Promise<void> {
  await assert.rejects(promise, (error: unknown) => (error as { code?: string }).code === code);
}

/** A reservation property (`reservation-properties.ts`) on the suite's limiter of LIMIT per PERIOD_MS. */
function reservationCheck(name: ReservationPropertyName): Check {
  return (c) => withSetup(c, (s) => reservationProperties[name]({ ...s, limit: LIMIT, periodMs: PERIOD_MS }));
}

const properties: Record<Exclude<PropertyName, 'partial-admission'>, Check> = {
  'fresh-key-admits-limit': (c) =>
    withSetup(c, async ({ limiter, key }) => {
      for (let i = 1; i <= LIMIT; i++) {
        assert.deepEqual(pick(await limiter.limit(key)), {
          allowed: true,
          limit: LIMIT,
          remaining: LIMIT - i,
          retryAfterMs: 0,
        });
      }
      const denied = await limiter.limit(key);
      assert.equal(denied.allowed, false);
      assert.equal(denied.remaining, 0);
      assert.ok(denied.retryAfterMs > 0 && Number.isFinite(denied.retryAfterMs), 'a denial says when to retry');
    }),

  'denial-charges-nothing': (c) =>
    withSetup(c, async ({ limiter, key }) => {
      assert.equal((await limiter.limit(key, { cost: LIMIT - 2 })).remaining, 2);
      const denied = await limiter.limit(key, { cost: 3 });
      assert.equal(denied.allowed, false, 'cost 3 with 2 left is denied');
      assert.equal(denied.remaining, 2, 'and charges nothing');
      assert.deepEqual(pick(await limiter.limit(key, { cost: 2 })), {
        allowed: true,
        limit: LIMIT,
        remaining: 0,
        retryAfterMs: 0,
      });
    }),

  'replenishes-at-rate': (c) =>
    withSetup(c, async ({ limiter, clock, key, exhaust }) => {
      await exhaust();
      for (let k = 1; k <= LIMIT; k++) {
        clock.advance(INTERVAL_MS);
        assert.equal((await limiter.limit(key)).allowed, true, `one more unit after ${k} emission interval(s)`);
        assert.equal((await limiter.limit(key)).allowed, false, `exactly one more after ${k} emission interval(s)`);
      }
    }),

  'full-after-period': (c) =>
    withSetup(c, async ({ limiter, clock, key, exhaust }) => {
      await exhaust();
      clock.advance(PERIOD_MS);
      const decision = await limiter.limit(key, { cost: LIMIT });
      assert.equal(decision.allowed, true, 'the whole limit is back one period later');
      assert.equal(decision.remaining, 0);
    }),

  'keys-isolated': (c) =>
    withSetup(c, async ({ limiter, key, exhaust }) => {
      await exhaust();
      assert.equal((await limiter.limit(key)).allowed, false);
      const other = await limiter.limit(uniqueKey(), { cost: LIMIT });
      assert.equal(other.allowed, true, 'another key is untouched');
    }),

  'remaining-coherent': (c) =>
    withSetup(c, async ({ limiter, key }) => {
      let expected = LIMIT;
      for (const cost of [1, 3, 2, 1, 1, 4, 0, 1]) {
        const decision = await limiter.limit(key, { cost });
        assert.equal(decision.allowed, cost <= expected, `cost ${cost} with ${expected} left`);
        if (decision.allowed) expected -= cost;
        assert.ok(Number.isInteger(decision.remaining) && decision.remaining >= 0 && decision.remaining <= LIMIT);
        assert.equal(decision.remaining, expected, 'remaining falls by exactly the cost admitted');
        assert.equal(decision.retryAfterMs === 0, decision.allowed, 'retryAfterMs is 0 iff allowed');
      }
    }),

  'retry-after-exact': async (c) => {
    // Each cost from a freshly exhausted key: the advertised wait is exact to the millisecond.
    for (const cost of [1, 2]) {
      await withSetup(c, async ({ limiter, clock, key, exhaust }) => {
        await exhaust();
        const retryAfterMs = (await limiter.limit(key, { cost })).retryAfterMs;
        assert.ok(retryAfterMs > 1, `a denied cost ${cost} waits`);
        clock.advance(retryAfterMs - 1);
        const early = await limiter.limit(key, { cost });
        assert.equal(early.allowed, false, `denied 1 ms before retryAfterMs (cost ${cost})`);
        assert.equal(early.retryAfterMs, 1, 'and told to wait exactly 1 ms more');
        clock.advance(1);
        assert.equal((await limiter.limit(key, { cost })).allowed, true, `admitted at retryAfterMs (cost ${cost})`);
      });
    }
  },

  'never-possible-cost': (c) =>
    withSetup(c, async ({ limiter, key }) => {
      assert.equal((await limiter.limit(key, { cost: 1 })).remaining, LIMIT - 1);
      const denied = await limiter.limit(key, { cost: LIMIT + 1 });
      assert.deepEqual(pick(denied), {
        allowed: false,
        limit: LIMIT,
        remaining: LIMIT - 1,
        retryAfterMs: Number.POSITIVE_INFINITY,
      });
      assert.equal((await limiter.limit(key, { cost: LIMIT - 1 })).allowed, true, 'state unchanged by the denial');
    }),

  'zero-cost': (c) =>
    withSetup(c, async ({ limiter, key, exhaust }) => {
      assert.deepEqual(pick(await limiter.limit(key, { cost: 0 })), {
        allowed: true,
        limit: LIMIT,
        remaining: LIMIT,
        retryAfterMs: 0,
      });
      await exhaust();
      const zero = await limiter.limit(key, { cost: 0 });
      assert.equal(zero.allowed, true, 'cost 0 always passes');
      assert.equal(zero.remaining, 0);
      assert.equal((await limiter.limit(key)).allowed, false, 'and spent nothing');
    }),

  peek: (c) =>
    withSetup(c, async ({ limiter, key }) => {
      assert.deepEqual(pick(await limiter.peek(key)), {
        allowed: true,
        limit: LIMIT,
        remaining: LIMIT,
        retryAfterMs: 0,
      });
      const spent = await limiter.limit(key, { cost: LIMIT - 1 });
      assert.deepEqual(await limiter.peek(key), spent, 'peek reports what the key holds now');
      assert.equal((await limiter.peek(key)).remaining, 1, 'peek spends nothing');
      await limiter.limit(key);
      const peeked = await limiter.peek(key);
      const denied = await limiter.limit(key);
      assert.deepEqual(pick(peeked), pick(denied), 'peek on an exhausted key reports the denial a request would get');
    }),

  reset: (c) =>
    withSetup(c, async ({ limiter, key, exhaust }) => {
      await exhaust();
      await limiter.reset(key);
      assert.equal((await limiter.limit(key, { cost: LIMIT })).allowed, true, 'a reset key is fresh');
    }),

  'invalid-input': (c) =>
    withSetup(c, async ({ limiter, key }) => {
      await limiter.limit(key);
      for (const cost of [-1, Number.NaN, 1.5, Number.POSITIVE_INFINITY, '2' as unknown as number]) {
        await rejectsWithCode(limiter.limit(key, { cost }), 'ERR_SLUICE_INVALID_COST');
      }
      for (const bad of ['', 'k'.repeat(513), 'é'.repeat(257), 42 as unknown as string]) {
        await rejectsWithCode(limiter.limit(bad), 'ERR_SLUICE_INVALID_KEY');
        await rejectsWithCode(limiter.peek(bad), 'ERR_SLUICE_INVALID_KEY');
      }
      assert.equal((await limiter.limit(`${key}:`.padEnd(512, 'k'))).allowed, true, 'a 512-byte key is accepted');
      assert.equal((await limiter.limit(key)).remaining, LIMIT - 2, 'rejected calls changed nothing');
    }),

  block: (c) =>
    withSetup(c, async ({ limiter, key, clock }) => {
      if (lacks(limiter, 'block', c.skip)) return;
      const block = limiter.block as NonNullable<Limiter['block']>;
      await limiter.limit(key, { cost: LIMIT - 1 });
      await rejectsWithCode(block.call(limiter, key, -1), 'ERR_SLUICE_INVALID_DURATION');
      await block.call(limiter, key, 3 * INTERVAL_MS);
      const denied = await limiter.limit(key);
      assert.equal(denied.allowed, false, 'a blocked key denies what it could admit');
      assert.equal(denied.reason, 'blocked');
      assert.equal(denied.retryAfterMs, 3 * INTERVAL_MS, 'retry after the block, which ends after the key has room');
      assert.equal((await limiter.peek(key)).reason, 'blocked', 'peek reports the block');
      clock.advance(3 * INTERVAL_MS - 1);
      assert.equal((await limiter.limit(key)).allowed, false, 'still blocked 1 ms before its end');
      clock.advance(1);
      const admitted = await limiter.limit(key);
      assert.equal(admitted.allowed, true, 'admitted when the block ends');
      assert.equal(admitted.reason, undefined);
      await block.call(limiter, key, 60_000);
      await limiter.reset(key);
      assert.equal((await limiter.limit(key)).allowed, true, 'a reset key is fresh and unblocked');
    }),

  'penalty-reward': (c) =>
    withSetup(c, async ({ limiter, key }) => {
      if (lacks(limiter, 'penalty', c.skip) || lacks(limiter, 'reward', c.skip)) return;
      const penalty = limiter.penalty as NonNullable<Limiter['penalty']>;
      const reward = limiter.reward as NonNullable<Limiter['reward']>;
      await penalty.call(limiter, key, 2);
      assert.equal((await limiter.peek(key)).remaining, LIMIT - 2, 'a penalty spends without an admission');
      await reward.call(limiter, key, 1);
      assert.equal((await limiter.peek(key)).remaining, LIMIT - 1, 'a reward gives units back');
      await reward.call(limiter, key, 100);
      assert.equal((await limiter.peek(key)).remaining, LIMIT, 'never past fresh');
      await penalty.call(limiter, key, LIMIT);
      const denied = await limiter.limit(key);
      assert.equal(denied.allowed, false, 'a penalty of the whole limit denies');
      await rejectsWithCode(penalty.call(limiter, key, -1), 'ERR_SLUICE_INVALID_COST');
    }),

  async invalidations(c) {
    const { target, profile } = c;
    const clock = manualClock();
    const algorithm = profile.build(LIMIT, PERIOD_MS);
    const [changer, hearer] = await Promise.all([
      target.create(algorithm, clock, 0),
      target.create(algorithm, clock, 1),
    ]);
    try {
      if (lacks(hearer, 'invalidations', c.skip)) return;
      const invalidations = hearer.invalidations as NonNullable<Limiter['invalidations']>;
      await until(() => invalidations.live, 'the invalidations are live');
      const key = uniqueKey();
      const heard: string[] = [];
      const stop = invalidations.subscribe((heardKey, change) => {
        if (heardKey === key && change !== undefined) heard.push(change);
      });
      await changer.reset(key);
      await until(() => heard.includes('reset'), "another connection's reset is heard");
      if (changer.block) {
        await changer.block(key, 1_000);
        await until(() => heard.includes('block'), 'a block is heard');
      }
      stop();
    } finally {
      await Promise.all([changer.close(), hearer.close()]);
    }
  },

  async concurrency({ target, profile }) {
    const limit = 100;
    const clock = manualClock();
    const algorithm = profile.build(limit, PERIOD_MS);
    const limiters = await Promise.all([0, 1, 2, 3].map((connection) => target.create(algorithm, clock, connection)));
    const key = uniqueKey();
    try {
      const decisions = await Promise.all(
        Array.from({ length: 1280 }, (_, i) => (limiters[i % limiters.length] as Limiter).limit(key)),
      );
      assert.equal(decisions.filter((d) => d.allowed).length, limit, '1,280 racing calls admit exactly the limit');
    } finally {
      await Promise.all(limiters.map((l) => l.close()));
    }
  },

  async 'reference-model'({ target, profile }) {
    const fc = await loadFastCheck();
    const step = fc.record({
      advanceMs: fc.oneof(
        fc.constant(0),
        fc.integer({ min: 0, max: 2 * INTERVAL_MS }),
        fc.integer({ min: 0, max: 2 * PERIOD_MS }),
      ),
      key: fc.constantFrom('a', 'b', 'c'),
      cost: fc.integer({ min: 0, max: LIMIT + 1 }),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 40 }), async (steps) => {
        const { limiter, clock, key: namespace } = await setup(target, profile);
        const model = profile.reference(LIMIT, PERIOD_MS);
        try {
          for (const { advanceMs, key, cost } of steps) {
            clock.advance(advanceMs);
            const actual = await limiter.limit(`${namespace}:${key}`, { cost });
            assert.deepEqual(actual, model.decide(key, clock.now(), cost));
          }
        } finally {
          await limiter.close();
        }
      }),
      { numRuns: target.propertyRuns ?? 25 },
    );
  },
  'reservation-settle': reservationCheck('reservation-settle'),
  'reservation-expiry': reservationCheck('reservation-expiry'),
  'reservation-debt': reservationCheck('reservation-debt'),

  // Random schedules whose calls carry random per-call params (a plan that changes on a live
  // key, both ways): every decision equals the reference model's under that call's limit.
  async 'per-request-params'({ target, profile }) {
    const fc = await loadFastCheck();
    const step = fc.record({
      advanceMs: fc.oneof(
        fc.constant(0),
        fc.integer({ min: 0, max: 2 * INTERVAL_MS }),
        fc.integer({ min: 0, max: PERIOD_MS }),
      ),
      key: fc.constantFrom('a', 'b'),
      cost: fc.integer({ min: 0, max: 2 * LIMIT + 1 }),
      // Limits dividing the period, so every plan's rate is a whole number of ms per unit.
      limit: fc.constantFrom(2, 4, LIMIT, 8, 2 * LIMIT),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 40 }), async (steps) => {
        const { limiter, clock, key: namespace } = await setup(target, profile);
        const model = profile.reference(LIMIT, PERIOD_MS);
        try {
          for (const { advanceMs, key, cost, limit } of steps) {
            clock.advance(advanceMs);
            const params = profile.paramsOf(limit, PERIOD_MS);
            const actual = await limiter.limit(`${namespace}:${key}`, { cost, params });
            assert.deepEqual(actual, model.decide(key, clock.now(), cost, limit), `under ${JSON.stringify(params)}`);
          }
        } finally {
          await limiter.close();
        }
      }),
      { numRuns: target.propertyRuns ?? 25 },
    );
  },
};

const byCapability: Record<Capability, [PropertyName, Check]> = {
  partial: [
    'partial-admission',
    async (c) => {
      if (c.profile.name === 'gcra') await redisRateCases(c);
      await withSetup(c, async ({ limiter, clock, key }) => {
        const partially = (cost: number) => limiter.limit(key, { cost, partial: true });
        assert.deepEqual(pickPartial(await partially(2)), { allowed: true, admitted: 2, remaining: LIMIT - 2 });
        assert.deepEqual(pickPartial(await partially(0)), { allowed: true, admitted: 0, remaining: LIMIT - 2 });
        assert.deepEqual(pickPartial(await partially(LIMIT * 2)), { allowed: true, admitted: LIMIT - 2, remaining: 0 });
        const none = await partially(LIMIT * 200);
        assert.deepEqual(pickPartial(none), { allowed: false, admitted: 0, remaining: 0 });
        assert.equal(none.retryAfterMs, (await limiter.limit(key)).retryAfterMs, 'a denial waits for one unit');
        assert.ok(none.retryAfterMs > 1 && Number.isFinite(none.retryAfterMs));
        clock.advance(none.retryAfterMs - 1);
        assert.deepEqual(pick(await partially(LIMIT)), { allowed: false, limit: LIMIT, remaining: 0, retryAfterMs: 1 });
        clock.advance(1);
        const back = await partially(LIMIT);
        assert.ok(back.allowed && (back.admitted as number) >= 1, 'at least one unit at retryAfterMs');
        assert.equal(back.remaining, 0, 'and every unit back then');
      });
      await withSetup(c, async ({ limiter, key }) => {
        if (limiter.block === undefined) return;
        await limiter.block(key, 3 * INTERVAL_MS);
        const blocked = await limiter.limit(key, { cost: 2, partial: true });
        assert.deepEqual(pickPartial(blocked), { allowed: false, admitted: 0, remaining: 0 }, 'a block admits nothing');
        assert.equal(blocked.reason, 'blocked');
        assert.equal(
          blocked.retryAfterMs,
          (await limiter.limit(key)).retryAfterMs,
          'a blocked denial waits for one unit',
        );
      });
      // Against the reference model: random schedules of whole and partial requests.
      const fc = await loadFastCheck();
      const step = fc.record({
        advanceMs: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 2 * INTERVAL_MS })),
        key: fc.constantFrom('a', 'b'),
        cost: fc.integer({ min: 0, max: 2 * LIMIT }),
        partial: fc.boolean(),
      });
      await fc.assert(
        fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 30 }), async (steps) => {
          const { limiter, clock, key: namespace } = await setup(c.target, c.profile);
          const model = c.profile.reference(LIMIT, PERIOD_MS);
          try {
            for (const { advanceMs, key, cost, partial } of steps) {
              clock.advance(advanceMs);
              const actual = await limiter.limit(`${namespace}:${key}`, { cost, partial });
              const now = clock.now();
              assert.deepEqual(actual, partial ? decidePartially(model, key, now, cost) : model.decide(key, now, cost));
            }
          } finally {
            await limiter.close();
          }
        }),
        { numRuns: c.target.propertyRuns ?? 25 },
      );
    },
  ],
};

/**
 * redis_rate's own `AllowAtMost` cases (GCRA, 10 per s): after 1 unit, at most 2 → 2 admitted
 * and 7 left at the next step; at most 10 with 7 left → 7; at most 1000 with none left → 0,
 * retrying after exactly one emission interval (100 ms), when one unit is back.
 */
async function redisRateCases({ target, profile }: { target: ConformanceTarget; profile: AlgorithmProfile }) {
  const { limiter, clock, key } = await setup(target, profile, 10, 1000);
  try {
    const partially = (cost: number) => limiter.limit(key, { cost, partial: true });
    assert.equal((await limiter.limit(key)).remaining, 9);
    assert.deepEqual(pickPartial(await partially(2)), { allowed: true, admitted: 2, remaining: 7 });
    assert.equal((await limiter.limit(key, { cost: 0 })).remaining, 7, '7 left at the next step');
    assert.deepEqual(pickPartial(await partially(10)), { allowed: true, admitted: 7, remaining: 0 });
    const none = await partially(1000);
    assert.deepEqual(pickPartial(none), { allowed: false, admitted: 0, remaining: 0 });
    assert.equal(none.retryAfterMs, 100, 'the exact wait for one unit');
    clock.advance(99);
    assert.equal((await partially(1000)).admitted, 0);
    clock.advance(1);
    assert.deepEqual(pickPartial(await partially(1000)), { allowed: true, admitted: 1, remaining: 0 });
  } finally {
    await limiter.close();
  }
}

/**
 * fast-check is an optional peer: only this property needs it, so `sluice/testing` loads
 * without it and the property fails with the package's name when it is missing.
 */
async function loadFastCheck(): Promise<typeof FastCheck> {
  try {
    return (await import('fast-check')).default;
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') throw error;
    throw new Error("the 'reference-model' property needs fast-check: npm install --save-dev fast-check", {
      cause: error,
    });
  }
}

function pick({ allowed, limit, remaining, retryAfterMs }: Decision) {
  return { allowed, limit, remaining, retryAfterMs };
}

function pickPartial({ allowed, admitted, remaining }: Decision) {
  return { allowed, admitted, remaining };
}

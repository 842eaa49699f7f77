import { describe, expect, it } from 'vitest';
import {
  type Algorithm,
  createLeasedLimiter,
  createMemoryLimiter,
  type Decision,
  gcra,
  type Limiter,
  tokenBucket,
} from '../../src/index.js';
import { createRedisLimiter } from '../../src/stores/redis/index.js';
import { manualClock } from '../../src/testing/index.js';
import { gcraReference } from '../../src/testing/reference/gcra.js';
import { decidePartially } from '../../src/testing/reference/partial.js';
import { tokenBucketReference } from '../../src/testing/reference/token-bucket.js';
import type { ReferenceModel } from '../../src/testing/reference/types.js';
import { held } from '../support/held-keys.js';
import { useRedisServer } from '../support/redis-server.js';

const { redis } = useRedisServer();

const pick = ({ allowed, admitted, remaining, retryAfterMs }: Decision) => ({
  allowed,
  admitted,
  remaining,
  retryAfterMs,
});

describe('leasing: partial admission spends held units first, then asks the remote partially for the rest', () => {
  it('GCRA 10 per s, lease 5: a lease hit, then held + remote in one call, then a denial waiting for one unit', async () => {
    let nowMs = 1_000_000;
    const clock = () => nowMs;
    const remote = createMemoryLimiter({ algorithm: gcra({ limit: 10, periodMs: 1000 }), clock, pruneIntervalMs: 0 });
    const leased = createLeasedLimiter({ remote, leaseSize: 5, clock });
    expect((await leased.limit('k')).allowed).toBe(true); // leases 5: 4 held, 5 left remotely
    expect(leased.tryLimit('k', { cost: 3, partial: true })).toBeUndefined();
    const calls = leased.stats().remoteCalls;
    expect(pick(await leased.limit('k', { cost: 3, partial: true }))).toEqual({
      allowed: true,
      admitted: 3,
      remaining: 6,
      retryAfterMs: 0,
    });
    expect(leased.stats().remoteCalls).toBe(calls);
    // 1 held + 5 of the 9 asked of the remote.
    expect(pick(await leased.limit('k', { cost: 10, partial: true }))).toEqual({
      allowed: true,
      admitted: 6,
      remaining: 0,
      retryAfterMs: 0,
    });
    expect(leased.stats().remoteCalls).toBe(calls + 1);
    expect(remote.peekSync('k').remaining).toBe(0);
    expect(pick(await leased.limit('k', { cost: 1000, partial: true }))).toEqual({
      allowed: false,
      admitted: 0,
      remaining: 0,
      retryAfterMs: 100,
    });
    nowMs += 100;
    expect((await leased.limit('k', { cost: 1000, partial: true })).admitted).toBe(1);
    expect(leased.stats().heldUnits).toBe(0);
    await leased.close();
  });

  it('a failed remote call gives the held units back to the key', async () => {
    let fail = false;
    const remote = createMemoryLimiter({ algorithm: gcra({ limit: 10, periodMs: 1000 }), clock: () => 0 });
    const flaky = {
      ...remote,
      limit: (key: string, options?: object) => (fail ? Promise.reject(new Error('down')) : remote.limit(key, options)),
    };
    const leased = createLeasedLimiter({ remote: flaky, leaseSize: 5, clock: () => 0 });
    await leased.limit('k');
    fail = true;
    await expect(leased.limit('k', { cost: 6, partial: true })).rejects.toThrow('down');
    expect(leased.stats().heldUnits).toBe(4);
    await expect(leased.limit('k', { cost: 4, partial: 'yes' as unknown as boolean })).rejects.toMatchObject({
      code: 'ERR_SLUICE_INVALID_COST',
    });
    expect(() => leased.tryLimit('k', { cost: 4, partial: 'yes' as unknown as boolean })).toThrow('partial');
    fail = false;
    await leased.close();
  });
});

// Counterexamples the conformance property found (limit 5 per 10 s, leaseSize 1, one instant
// unless advanced): a whole request refused, so its refusal was cached; a partial one then
// admitted units at the remote, which left that refusal standing, and the next whole request
// was denied by it with the old, too short retry-after (2000 ms instead of 4000).
type Step = readonly [advanceMs: number, cost: number, partial: boolean];
const counterexamples: readonly [string, () => Algorithm, () => ReferenceModel, readonly Step[]][] = [
  [
    'GCRA: 3, 3 (refused), partial 1, 3',
    () => gcra({ limit: 5, periodMs: 10_000 }),
    () => gcraReference(5, 10_000),
    [
      [0, 3, false],
      [0, 3, false],
      [0, 1, true],
      [0, 3, false],
    ],
  ],
  [
    'GCRA: 2, 4 (refused), partial 1, 4',
    () => gcra({ limit: 5, periodMs: 10_000 }),
    () => gcraReference(5, 10_000),
    [
      [0, 2, false],
      [0, 4, false],
      [0, 1, true],
      [0, 4, false],
    ],
  ],
  [
    'token bucket: 2, 3, +1665 ms 2 (refused), +335 ms partial 1, 2',
    () => tokenBucket({ capacity: 5, rate: 5, periodMs: 10_000 }),
    () => tokenBucketReference({ capacity: 5, rate: 5, periodMs: 10_000 }),
    [
      [0, 2, false],
      [0, 3, false],
      [1665, 2, false],
      [335, 1, true],
      [0, 2, false],
    ],
  ],
];

const remotes: readonly [string, (algorithm: Algorithm, clock: () => number) => Limiter][] = [
  ['memory', (algorithm, clock) => createMemoryLimiter({ algorithm, clock, pruneIntervalMs: 0 })],
  [
    'Redis',
    (algorithm, clock) =>
      createRedisLimiter({ client: held(redis()), algorithm, clock, prefix: `cached${++prefixes}:` }),
  ],
];
let prefixes = 0;

describe.each(remotes)('leasing over %s: a partial admission voids the cached refusal it made stale', (_, remoteOf) => {
  it.each(counterexamples)(
    '%s, leaseSize 1: every decision as the reference model',
    async (_, algorithm, model, steps) => {
      const clock = manualClock();
      const leased = createLeasedLimiter({ remote: remoteOf(algorithm(), clock.now), leaseSize: 1, clock: clock.now });
      const reference = model();
      for (const [i, [advanceMs, cost, partial]] of steps.entries()) {
        clock.advance(advanceMs);
        const expected = partial
          ? decidePartially(reference, 'k', clock.now(), cost)
          : reference.decide('k', clock.now(), cost);
        expect(await leased.limit('k', { cost, partial }), `step ${i + 1}`).toEqual(expected);
      }
      await leased.close();
    },
  );
});

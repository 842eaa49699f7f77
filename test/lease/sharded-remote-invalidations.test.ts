import { describe, expect, it } from 'vitest';
import { gcra } from '../../src/algorithms/gcra.js';
import { StoreUnavailableError } from '../../src/errors.js';
import { createLeasedLimiter } from '../../src/lease/leased-limiter.js';
import type { InvalidationChange } from '../../src/limiter.js';
import { withFailurePolicy } from '../../src/policy/with-failure-policy.js';
import { createShardedLimiter } from '../../src/shard/shard.js';
import { manualClock, memory } from '../http/support/scenarios.js';
import { hasFastProperties } from '../support/v8-shapes.js';

/*
 * A sharded limiter hears its sub-keys' invalidations as its key's. It used to pass the key
 * alone, so every change arrived as undefined: the layers above, which act on the change, took
 * an unblock or a reset for nothing they knew.
 */

describe("a sharded limiter's invalidations keep their change", () => {
  it('keep fast properties, so a leased limiter reads live on each refusal without a hash lookup', () => {
    const sharded = createShardedLimiter({
      algorithm: gcra({ limit: 10, periodMs: 60_000 }),
      shards: 2,
      create: (shard) => memory(shard, manualClock().read),
    });
    const invalidations = sharded.invalidations;
    expect(invalidations && hasFastProperties(invalidations)).toBe(true);
    expect(invalidations?.live).toBe(true);
    expect(Object.keys(invalidations ?? {})).toContain('live');
  });

  it('over a sharded limiter, an unblock heard through its invalidations ends the known block', async () => {
    const clock = manualClock();
    const sharded = createShardedLimiter({
      algorithm: gcra({ limit: 10, periodMs: 60_000 }),
      shards: 2,
      create: (shard) => memory(shard, clock.read),
    });
    const heard: (InvalidationChange | undefined)[] = [];
    sharded.invalidations?.subscribe((_key, change) => heard.push(change));
    let down = false;
    const downable = {
      ...sharded,
      async limit(key: string) {
        if (down) throw new StoreUnavailableError('down');
        return sharded.limit(key);
      },
    };
    const limiter = withFailurePolicy(downable, {
      failure: 'fallback',
      fallback: { instances: 1 },
      clock: clock.read,
      onWarning: false,
    });
    // Another instance blocks and unblocks the key; this one meets the block in a decision.
    await sharded.block?.('k', 60_000);
    expect(await limiter.limit('k')).toMatchObject({ allowed: false, reason: 'blocked' });
    await sharded.unblock?.('k');
    expect(heard).toEqual(['block', 'block', 'unblock', 'unblock']);
    down = true;
    expect(await limiter.limit('k')).toMatchObject({ allowed: true, degraded: true });
    await limiter.close();
  });

  it('over a sharded remote, a reset on another instance drops the units a leased limiter holds', async () => {
    const clock = manualClock();
    const sharded = createShardedLimiter({
      algorithm: gcra({ limit: 100, periodMs: 60_000 }),
      shards: 2,
      create: (shard) => memory(shard, clock.read),
    });
    const leased = createLeasedLimiter({ remote: sharded, leaseSize: 5, clock: clock.read });
    expect((await leased.limit('k')).allowed).toBe(true); // 4 units stay held here
    await sharded.reset('k');
    expect(leased.stats().expiredUnits).toBe(4);
    await leased.close();
  });
});

import { expect, it } from 'vitest';
import { gcra } from '../../src/index.js';
import { createRedisLimiter, keySlot } from '../../src/stores/redis/index.js';
import { redisKeyName } from '../../src/stores/redis/key-name.js';
import { gcraScript } from '../../src/stores/redis/scripts/gcra.js';
import type { TestCluster } from '../support/cluster.js';
import { errorsBetween, randomIdentifier, scriptCallsBetween, serverStats } from './support.js';

/**
 * Registers the 1,000-identifier slot test on `cluster()` (read in the test, once the file's
 * `beforeAll` has started it): `keySlot` matches `CLUSTER KEYSLOT`, and a batched limiter on
 * `connect()`'s Cluster client decides every identifier on its owning master in one call per
 * slot, with no CROSSSLOT. Shared by the Redis and Valkey cluster files.
 */
export function itDecidesRandomIdentifiersBySlot(cluster: () => TestCluster, connect: () => Promise<unknown>): void {
  it('computes CLUSTER KEYSLOT for 1,000 random identifiers and decides them batched with no CROSSSLOT', async () => {
    const { masters, ownerOf } = cluster();
    const masterStats = () => serverStats(masters.map((master) => master.admin));
    const prefix = 'slots:';
    const ids = Array.from({ length: 1000 }, (_, i) => `${randomIdentifier()}#${i}`);
    const admin = masters[0]?.admin;
    for (const id of ids) {
      const key = redisKeyName(prefix, id);
      expect(keySlot(key), key).toBe(await admin?.cluster('KEYSLOT', key));
    }
    // Masters with the script cached and a client that knows the slot map: no NOSCRIPT, no MOVED.
    for (const master of masters) await master.admin.script('LOAD', gcraScript.source);
    const limiter = createRedisLimiter({
      client: await connect(),
      algorithm: gcra({ limit: 3, periodMs: 60_000 }),
      prefix,
      batch: true,
    });
    const before = await masterStats();
    const decisions = await Promise.all(ids.map((id) => limiter.limit(id, { cost: 2 })));
    const after = await masterStats();
    expect(decisions.every((d) => d.allowed && d.remaining === 1)).toBe(true);
    expect(errorsBetween(before, after, 'CROSSSLOT')).toBe(0);
    expect(errorsBetween(before, after, 'MOVED')).toBe(0);
    const distinctSlots = new Set(ids.map((id) => keySlot(redisKeyName(prefix, id)))).size;
    expect(scriptCallsBetween(before, after), 'one call per slot these keys hash to').toBe(distinctSlots);

    const perMaster = new Map<number, number>();
    for (const id of ids) {
      const owner = await ownerOf(keySlot(redisKeyName(prefix, id)));
      expect(await owner.admin.exists(redisKeyName(prefix, id))).toBe(1);
      perMaster.set(owner.port, (perMaster.get(owner.port) ?? 0) + 1);
    }
    expect(perMaster.size).toBe(masters.length);
    // ~333 each; 200 is more than 8 standard deviations below.
    for (const count of perMaster.values()) expect(count).toBeGreaterThan(200);
  });
}

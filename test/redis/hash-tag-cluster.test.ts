import type { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createConcurrencyLimiter, redisHolds } from '../../src/concurrency/index.js';
import { gcra, type Limiter } from '../../src/index.js';
import { createRedisPauseStore } from '../../src/outbound/index.js';
import { createRedisLimiter, keySlot } from '../../src/stores/redis/index.js';
import { manualClock } from '../../src/testing/index.js';
import { connectNodeRedisCluster, type NodeRedisCluster } from '../scale/node-redis.js';
import { errorsBetween, serverStats } from '../scale/support.js';
import { startCluster, type TestCluster } from '../support/cluster.js';

// A key that empties or cuts the hash tag (`}x` → `prefix{}x}`) used to put its state and its
// `:block` companion in different slots of a Cluster, so a blocked key walked through.

/** Keys whose raw form would empty or end the hash tag early. */
const HOSTILE = ['}x', '}', 'a}b', '{}', '}{', '{', '%', '%7D'];
/** Pairs that one non-injective escape or another would merge. */
const LOOKALIKES = [
  ['}', '%7D'],
  ['%', '%25'],
  ['%7D', '%257D'],
  ['}x', '%7Dx'],
] as const;

let cluster: TestCluster;
let ioredis: Cluster;
let nodeRedis: NodeRedisCluster;
let prefixes = 0;

beforeAll(async () => {
  cluster = await startCluster({ masters: 3 });
  ioredis = cluster.connect();
  nodeRedis = await connectNodeRedisCluster(cluster);
});
afterAll(async () => {
  await nodeRedis?.close();
  await cluster?.stop();
});

const targets: [string, () => Limiter][] = [
  ['ioredis Cluster', () => limiterOn(ioredis)],
  ['ioredis Cluster, batched by slot', () => limiterOn(ioredis, { bySlot: true })],
  ['ioredis Cluster, batched by node', () => limiterOn(ioredis, { byNode: true })],
  ['node-redis createCluster', () => limiterOn(nodeRedis)],
];

function limiterOn(client: unknown, batch?: { bySlot?: boolean; byNode?: boolean }): Limiter {
  return createRedisLimiter({
    client,
    algorithm: gcra({ limit: 5, periodMs: 60_000 }),
    prefix: `tag${++prefixes}:`,
    clock: manualClock().now,
    onWarning: false,
    ...(batch && { batch }),
  });
}

describe.each(targets)('hash tags on a 3-master Redis Cluster: %s', (_name, limiterOf) => {
  it.each(HOSTILE)('a blocked key %j is denied as blocked', async (key) => {
    const limiter = limiterOf();
    expect((await limiter.limit(key)).allowed).toBe(true);
    await limiter.block?.(key, 60_000);
    expect(await limiter.limit(key)).toMatchObject({ allowed: false, reason: 'blocked', retryAfterMs: 60_000 });
    expect(await limiter.peek(key)).toMatchObject({ allowed: false, reason: 'blocked' });
    await limiter.unblock?.(key);
    expect((await limiter.limit(key)).allowed).toBe(true);
  });

  it.each(LOOKALIKES)('blocking %j leaves %j alone, and the other way round', async (a, b) => {
    const limiter = limiterOf();
    await limiter.block?.(a, 60_000);
    expect((await limiter.limit(b)).allowed, `${b} is not blocked`).toBe(true);
    expect((await limiter.limit(a)).reason).toBe('blocked');
    await limiter.unblock?.(a);
    await limiter.block?.(b, 60_000);
    expect((await limiter.limit(a)).allowed, `${a} is not blocked`).toBe(true);
    expect(await limiter.limit(b, { cost: 4 })).toMatchObject({ allowed: false, reason: 'blocked' });
  });
});

describe('hash tags on a 3-master Redis Cluster: stored keys', () => {
  it('keeps every key beside its :block companion, in the slot keySlot names', async () => {
    const prefix = `stored${++prefixes}:`;
    const limiter = createRedisLimiter({
      client: ioredis,
      algorithm: gcra({ limit: 5, periodMs: 60_000 }),
      prefix,
      onWarning: false,
    });
    for (const key of [...HOSTILE, ...LOOKALIKES.flat()]) await limiter.block?.(key, 60_000);
    const stored: string[] = [];
    for (const master of cluster.masters) stored.push(...(await master.admin.keys(`${prefix}*`)));
    const blocks = stored.filter((key) => key.endsWith(':block'));
    expect(blocks).toHaveLength(new Set([...HOSTILE, ...LOOKALIKES.flat()]).size);
    const admin = cluster.masters[0]?.admin;
    for (const block of blocks) {
      const state = block.slice(0, -':block'.length);
      const slot = await admin?.cluster('KEYSLOT', block);
      expect(await admin?.cluster('KEYSLOT', state), `${state} beside its block`).toBe(slot);
      expect(keySlot(block), `keySlot routes ${block} where the server hashes it`).toBe(slot);
    }
  });
});

describe('hash tags on a 3-master Redis Cluster: holds and pauses', () => {
  // One key each, no companion: never split, but composed by the same rule.
  it.each(LOOKALIKES)('holds of %j and %j are counted apart', async (a, b) => {
    const limiter = createConcurrencyLimiter({
      limit: 1,
      holdMs: 60_000,
      store: redisHolds({ client: ioredis, prefix: `holds${++prefixes}:` }),
    });
    expect((await limiter.acquire(a)).allowed).toBe(true);
    expect((await limiter.acquire(a)).allowed).toBe(false);
    expect((await limiter.acquire(b)).allowed, `${b} holds nothing`).toBe(true);
    expect([await limiter.held(a), await limiter.held(b)]).toEqual([1, 1]);
  });

  it.each(LOOKALIKES)('a pause of %j does not pause %j', async (a, b) => {
    const pauses = createRedisPauseStore({ client: ioredis, prefix: `pause${++prefixes}:` });
    await pauses.pause(a, 60_000);
    expect(await pauses.pausedForMs(a)).toBeGreaterThan(50_000);
    expect(await pauses.pausedForMs(b)).toBe(0);
  });
});

describe('blocks in a slot being migrated', () => {
  /** Two ids whose keys share one slot, so one batched call decides both. */
  function twoIdsOfOneSlot(): [string, string] {
    const first = new Map<number, string>();
    for (let i = 0; ; i++) {
      const id = `m${i}`;
      const slot = keySlot(`{${id}}`);
      const other = first.get(slot);
      if (other !== undefined) return [other, id];
      first.set(slot, id);
    }
  }

  /**
   * A GCRA limiter that has spent one unit of two keys of one slot and blocked both; then the
   * slot starts migrating and the first key's block alone moves away. `finish` ends the move.
   */
  async function oneBlockMoved(batch: { bySlot: true } | false) {
    const prefix = `mig${++prefixes}:`;
    const limiter = createRedisLimiter({
      client: ioredis,
      algorithm: gcra({ limit: 5, periodMs: 60_000 }),
      prefix,
      clock: manualClock().now,
      onWarning: false,
      batch,
    });
    const [moved, staying] = twoIdsOfOneSlot();
    const slot = keySlot(`{${moved}}`);
    const from = await cluster.ownerOf(slot);
    const to = cluster.masters.find((master) => master.id !== from.id);
    if (!to) throw new Error('a second master');
    for (const id of [moved, staying]) {
      await limiter.limit(id);
      await limiter.block?.(id, 60_000);
    }
    await to.admin.call('CLUSTER', 'SETSLOT', slot, 'IMPORTING', from.id);
    await from.admin.call('CLUSTER', 'SETSLOT', slot, 'MIGRATING', to.id);
    await from.admin.call('MIGRATE', '127.0.0.1', to.port, '', 0, 5000, 'KEYS', `${prefix}{${moved}}:block`);
    return { limiter, moved, staying, finish: () => cluster.migrateSlot(slot, to) };
  }

  it("reads each key's block alone when a batch's MGET fails: a block still here holds, one moved away reads as none", async () => {
    const { limiter, moved, staying, finish } = await oneBlockMoved({ bySlot: true });
    const [decisionOfMoved, decisionOfStaying] = await Promise.all([limiter.limit(moved), limiter.limit(staying)]);
    // The moved block cannot be read where the state is (docs/admin.md, limits on Cluster).
    expect(decisionOfMoved).toMatchObject({ allowed: true });
    expect(decisionOfStaying).toMatchObject({ allowed: false, reason: 'blocked' });
    await finish();
    expect(await limiter.limit(moved)).toMatchObject({ allowed: false, reason: 'blocked' });
  });

  it("reads a one-key call's state and block apart when their MGET fails: the state holds, a block moved away reads as none", async () => {
    const { limiter, moved, staying, finish } = await oneBlockMoved(false);
    // Its state, still here, is read alone: one unit spent before, one now.
    expect(await limiter.limit(moved)).toMatchObject({ allowed: true, remaining: 3 });
    expect(await limiter.limit(staying)).toMatchObject({ allowed: false, reason: 'blocked' });
    await finish();
    expect(await limiter.limit(moved)).toMatchObject({ allowed: false, reason: 'blocked' });
  });
});

describe('blocks on the per-master path', () => {
  it("reads a call's blocks key by key, each key once: no MGET over many slots, refused and counted as an error reply", async () => {
    const limiter = limiterOn(ioredis, { byNode: true });
    const ids = Array.from({ length: 30 }, (_, i) => `hot${i}`);
    await limiter.block?.('hot7', 60_000);
    const before = await serverStats(cluster.masters.map((master) => master.admin));
    // Each key three times in one turn: one call per master, its keys spanning slots.
    const decisions = await Promise.all([...ids, ...ids, ...ids].map((id) => limiter.limit(id)));
    const after = await serverStats(cluster.masters.map((master) => master.admin));
    expect(errorsBetween(before, after, 'ERR')).toBe(0);
    expect((after.commands.get('get') ?? 0) - (before.commands.get('get') ?? 0)).toBeLessThanOrEqual(ids.length);
    const denied = decisions.flatMap((decision) => (decision.allowed ? [] : [decision.reason ?? 'over']));
    expect(denied).toEqual(['blocked', 'blocked', 'blocked']);
  });
});

import { describe, expect, it } from 'vitest';
import { tokenBucketScript } from '../../src/stores/redis/scripts/token-bucket.js';
import { type ServerKind, useRedisServer } from '../support/redis-server.js';
import { decideAfter, type Setup } from './one-key.js';

// token-bucket.lua's one-key path against its general path, state by state (see ./one-key.ts).

const NOW_MS = 1_700_000_000_000;
const CAPACITY = 5;
const UNIT = 1000; // units per token
const REFILL = 1; // units per ms: a token a second
const FULL = CAPACITY * UNIT;

describe.each(['redis', 'valkey'] as const)('%s-server', (server: ServerKind) => {
  const { redis } = useRedisServer({ server });
  const bucketOf = async (key: string, deficit: number | string, lastMs: number, ttl = true) => {
    await redis().hset(key, { d: deficit, t: lastMs });
    if (ttl) await redis().pexpire(key, 60_000);
  };

  const cases: [name: string, setup: Setup, cost: number][] = [
    ['a fresh key', async () => undefined, 1],
    ['a bucket partly spent', (key) => bucketOf(key, 2 * UNIT, NOW_MS - 500), 1],
    ['a bucket admitting its last token', (key) => bucketOf(key, FULL - UNIT, NOW_MS), 1],
    ['an empty bucket, denied', (key) => bucketOf(key, FULL, NOW_MS - 10), 1],
    ['a bucket refilled since its last write', (key) => bucketOf(key, FULL, NOW_MS - 10_000), 2],
    ['a last write after the call’s clock', (key) => bucketOf(key, UNIT, NOW_MS + 2000), 1],
    ['a debt past a full bucket (a charge)', (key) => bucketOf(key, FULL + 4 * UNIT, NOW_MS), 1],
    ['a cost above the capacity', async () => undefined, CAPACITY + 1],
    ['a cost of 0 in a bucket partly spent', (key) => bucketOf(key, 3 * UNIT, NOW_MS), 0],
    ['a cost of 0 on a fresh key', async () => undefined, 0],
    ['a deficit that is no number', (key) => bucketOf(key, 'x', NOW_MS), 1],
    ['a bucket without a TTL (not Sluice’s)', (key) => bucketOf(key, FULL, NOW_MS, false), 1],
    ['a key of another type with a TTL', (key) => redis().set(key, 'x', 'PX', 60_000), 1],
    ['a key of another type without a TTL', (key) => redis().set(key, 'x'), 1],
    ['a live block', (key) => redis().set(`${key}:block`, NOW_MS + 30_000, 'PX', 30_000), 1],
    [
      'a block key already ended by the call’s clock',
      (key) => redis().set(`${key}:block`, NOW_MS - 1, 'PX', 30_000),
      1,
    ],
  ];

  const decide = (setup: Setup, cost: number, alone: boolean) =>
    decideAfter(redis(), tokenBucketScript.source, [NOW_MS, CAPACITY, UNIT, REFILL], setup, cost, alone);

  describe('token-bucket.lua: one key alone decides as the general path does', () => {
    for (const [name, setup, cost] of cases) {
      it(name, async () => {
        expect(await decide(setup, cost, true)).toEqual(await decide(setup, cost, false));
      });
    }

    it('a peek and a partial request of one key stay on the general path', async () => {
      const setup: Setup = (key) => bucketOf(key, 3 * UNIT, NOW_MS);
      for (const cost of [-1 - 2, -0.5 - 4]) {
        expect(await decide(setup, cost, true)).toEqual(await decide(setup, cost, false));
      }
    });
  });
});

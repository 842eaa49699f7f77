import { describe } from 'vitest';
import { tokenBucketScript } from '../../src/stores/redis/scripts/token-bucket.js';
import { type ServerKind, useRedisServer } from '../support/redis-server.js';
import { type Case, type Decide, decideAfter, hashStateCases, itDecidesAsTheGeneralPath } from './one-key.js';

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

  const cases: Case[] = [
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
    ...hashStateCases(redis, NOW_MS),
  ];

  const decide: Decide = (setup, cost, alone) =>
    decideAfter(redis(), tokenBucketScript.source, [NOW_MS, CAPACITY, UNIT, REFILL], setup, cost, alone);

  describe('token-bucket.lua: one key alone decides as the general path does', () => {
    itDecidesAsTheGeneralPath(decide, cases, (key) => bucketOf(key, 3 * UNIT, NOW_MS));
  });
});

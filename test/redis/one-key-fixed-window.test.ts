import { describe } from 'vitest';
import { fixedWindowScript } from '../../src/stores/redis/scripts/fixed-window.js';
import { type ServerKind, useRedisServer } from '../support/redis-server.js';
import { type Case, type Decide, decideAfter, hashStateCases, itDecidesAsTheGeneralPath } from './one-key.js';

// fixed-window.lua's one-key path against its general path, state by state (see ./one-key.ts).

const NOW_MS = 1_700_000_000_000;
const LIMIT = 5;
const WINDOW_MS = 60_000;

describe.each(['redis', 'valkey'] as const)('%s-server', (server: ServerKind) => {
  const { redis } = useRedisServer({ server });
  const windowOf = async (key: string, n: number | string, endMs: number, ttl = true) => {
    await redis().hset(key, { n, e: endMs });
    if (ttl) await redis().pexpire(key, WINDOW_MS);
  };

  const cases: Case[] = [
    ['a fresh key', async () => undefined, 1],
    ['an open window', (key) => windowOf(key, 2, NOW_MS + 30_000), 1],
    ['an open window, admitting its last unit', (key) => windowOf(key, 4, NOW_MS + 30_000), 1],
    ['a full window, denied', (key) => windowOf(key, LIMIT, NOW_MS + 30_000), 1],
    ['a window ending now', (key) => windowOf(key, LIMIT, NOW_MS), 2],
    ['a window already ended', (key) => windowOf(key, LIMIT, NOW_MS - 1), 1],
    ['a window that starts after the call’s clock', (key) => windowOf(key, 1, NOW_MS + WINDOW_MS + 10_000), 1],
    ['a cost above the limit', async () => undefined, LIMIT + 1],
    ['a cost of 0 in an open window', (key) => windowOf(key, 3, NOW_MS + 30_000), 0],
    ['a cost of 0 on a fresh key', async () => undefined, 0],
    ['a count that is no number', (key) => windowOf(key, 'x', NOW_MS + 30_000), 1],
    ['a window without a TTL (not Sluice’s)', (key) => windowOf(key, LIMIT, NOW_MS + 30_000, false), 1],
    ...hashStateCases(redis, NOW_MS),
  ];

  const decide: Decide = (setup, cost, alone) =>
    decideAfter(redis(), fixedWindowScript.source, [NOW_MS, LIMIT, WINDOW_MS], setup, cost, alone);

  describe('fixed-window.lua: one key alone decides as the general path does', () => {
    itDecidesAsTheGeneralPath(decide, cases, (key) => windowOf(key, 3, NOW_MS + 30_000));
  });
});

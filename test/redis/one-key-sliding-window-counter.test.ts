import { describe } from 'vitest';
import { slidingWindowCounterScript } from '../../src/stores/redis/scripts/sliding-window-counter.js';
import { type ServerKind, useRedisServer } from '../support/redis-server.js';
import { type Case, type Decide, decideAfter, hashStateCases, itDecidesAsTheGeneralPath } from './one-key.js';

// sliding-window-counter.lua's one-key path against its general path, state by state (see ./one-key.ts).

const NOW_MS = 1_700_000_000_000;
const LIMIT = 5;
const WINDOW_MS = 60_000;

describe.each(['redis', 'valkey'] as const)('%s-server', (server: ServerKind) => {
  const { redis } = useRedisServer({ server });
  const windowsOf = async (key: string, curr: number | string, prev: number, startMs: number, ttl = true) => {
    await redis().hset(key, { c: curr, p: prev, s: startMs });
    if (ttl) await redis().pexpire(key, 2 * WINDOW_MS);
  };

  const cases: Case[] = [
    ['a fresh key', async () => undefined, 1],
    ['a current window partly used', (key) => windowsOf(key, 2, 0, NOW_MS - 10_000), 1],
    ['a full current window, denied until the next', (key) => windowsOf(key, LIMIT, 0, NOW_MS - 10_000), 1],
    ['a previous window that still weighs, denied', (key) => windowsOf(key, 1, LIMIT, NOW_MS - 10_000), 1],
    ['a previous window that still weighs, admitted', (key) => windowsOf(key, 0, 2, NOW_MS - 30_000), 1],
    ['a window that rolled over once', (key) => windowsOf(key, 3, 1, NOW_MS - 70_000), 2],
    ['both windows past', (key) => windowsOf(key, LIMIT, LIMIT, NOW_MS - 130_000), 1],
    ['a window that starts after the call’s clock', (key) => windowsOf(key, 1, 0, NOW_MS + 5000), 1],
    ['a cost above the limit', (key) => windowsOf(key, 1, 0, NOW_MS - 10_000), LIMIT + 1],
    ['a cost of 0 in a window partly used', (key) => windowsOf(key, 2, 3, NOW_MS - 10_000), 0],
    ['a cost of 0 on a fresh key', async () => undefined, 0],
    ['a count that is no number', (key) => windowsOf(key, 'x', 1, NOW_MS - 10_000), 1],
    ['windows without a TTL (not Sluice’s)', (key) => windowsOf(key, LIMIT, 0, NOW_MS - 10_000, false), 1],
    ...hashStateCases(redis, NOW_MS),
  ];

  const decide: Decide = (setup, cost, alone) =>
    decideAfter(redis(), slidingWindowCounterScript.source, [NOW_MS, LIMIT, WINDOW_MS], setup, cost, alone);

  describe('sliding-window-counter.lua: one key alone decides as the general path does', () => {
    itDecidesAsTheGeneralPath(decide, cases, (key) => windowsOf(key, 2, 3, NOW_MS - 10_000));
  });
});

import { describe, expect, it } from 'vitest';
import { slidingWindowCounterScript } from '../../src/stores/redis/scripts/sliding-window-counter.js';
import { type ServerKind, useRedisServer } from '../support/redis-server.js';
import { decideAfter, type Setup } from './one-key.js';

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

  const cases: [name: string, setup: Setup, cost: number][] = [
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
    decideAfter(redis(), slidingWindowCounterScript.source, [NOW_MS, LIMIT, WINDOW_MS], setup, cost, alone);

  describe('sliding-window-counter.lua: one key alone decides as the general path does', () => {
    for (const [name, setup, cost] of cases) {
      it(name, async () => {
        expect(await decide(setup, cost, true)).toEqual(await decide(setup, cost, false));
      });
    }

    it('a peek and a partial request of one key stay on the general path', async () => {
      const setup: Setup = (key) => windowsOf(key, 2, 3, NOW_MS - 10_000);
      for (const cost of [-1 - 2, -0.5 - 4]) {
        expect(await decide(setup, cost, true)).toEqual(await decide(setup, cost, false));
      }
    });
  });
});

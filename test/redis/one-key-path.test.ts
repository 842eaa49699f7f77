import { describe } from 'vitest';
import { gcraScript } from '../../src/stores/redis/scripts/gcra.js';
import { useRedisServer } from '../support/redis-server.js';
import { type Case, type Decide, decideAfter, itDecidesAsTheGeneralPath } from './one-key.js';

// gcra.lua's one-key path against its general path, state by state (see ./one-key.ts).

const { redis } = useRedisServer();
const NOW_MS = 1_700_000_000_000;
const NOW_US = NOW_MS * 1000;
const INTERVAL_US = 1_000_000; // 1 per second
const BURST = 5;
const HORIZON_US = INTERVAL_US * BURST;

const cases: Case[] = [
  ['a fresh key', async () => undefined, 1],
  ['a TAT within the horizon', (key) => redis().set(key, NOW_US + 2 * INTERVAL_US, 'PX', 60_000), 1],
  ['a TAT within the horizon, denied', (key) => redis().set(key, NOW_US + HORIZON_US, 'PX', 60_000), 1],
  ['a TAT in the past', (key) => redis().set(key, NOW_US - 7 * INTERVAL_US, 'PX', 60_000), 2],
  ['a cost above the burst', async () => undefined, BURST + 1],
  ['a cost of 0', (key) => redis().set(key, NOW_US + INTERVAL_US, 'PX', 60_000), 0],
  [
    'a TAT beyond the horizon with a TTL (a charge)',
    (key) => redis().set(key, NOW_US + 9 * HORIZON_US, 'PX', 60_000),
    1,
  ],
  ['a TAT beyond the horizon without a TTL (not Sluice’s)', (key) => redis().set(key, NOW_US + 9 * HORIZON_US), 1],
  ['a value that is no number', (key) => redis().set(key, 'x'), 1],
  ['a key of another type', (key) => redis().hset(key, 'd', 1), 1],
  ['a live block', (key) => redis().set(`${key}:block`, NOW_MS + 30_000, 'PX', 30_000), 1],
  ['a block key already ended by the call’s clock', (key) => redis().set(`${key}:block`, NOW_MS - 1, 'PX', 30_000), 1],
];

const decide: Decide = (setup, cost, alone) =>
  decideAfter(redis(), gcraScript.source, [NOW_MS, INTERVAL_US, BURST], setup, cost, alone);

describe('gcra.lua: one key alone decides as the general path does', () => {
  itDecidesAsTheGeneralPath(decide, cases, (key) => redis().set(key, NOW_US + 3 * INTERVAL_US, 'PX', 60_000));
});

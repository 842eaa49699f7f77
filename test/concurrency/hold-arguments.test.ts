import { describe, expect, it } from 'vitest';
import { redisHolds } from '../../src/concurrency/index.js';
import { memoryHolds } from '../../src/concurrency/memory-holds.js';
import type { HoldStore } from '../../src/concurrency/types.js';
import { InvalidDurationError, InvalidKeyError, InvalidParamsError } from '../../src/index.js';
import { useRedisServer } from '../support/redis-server.js';

/*
 * A hold store's methods are public: called directly with an id, a limit or a holdMs the store
 * cannot keep, they used to store it. A NaN limit never denied, a NaN holdMs wrote a hold that
 * never expires in memory, and on Redis a renewal of 0 ms released the hold. They now reject with
 * the typed errors of the rest of Sluice, before any read or write.
 */

const redis = useRedisServer();
const BAD_IDS = ['', 'x'.repeat(513), 'a\udc00', 42, undefined, { id: 'h' }] as unknown as string[];
const BAD_LIMITS = [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, '2', undefined, null] as unknown as number[];
const BAD_HOLD_MS = [
  0,
  -5,
  1.5,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  2 ** 31,
  '1000',
  undefined,
] as unknown as number[];

let keys = 0;
const stores: [string, () => HoldStore][] = [
  ['memoryHolds', () => memoryHolds()],
  ['redisHolds', () => redisHolds({ client: redis.redis(), prefix: 'hold-arguments:' })],
];

describe.each(stores)('%s called directly checks id, limit and holdMs', (_name, create) => {
  it('rejects a bad hold id with InvalidKeyError in acquire, renew and release; the holds stay as they were', async () => {
    const store = create();
    const key = `k${++keys}`;
    expect(await store.acquire(key, 'h1', 1, 60_000)).toMatchObject({ granted: true, held: 1 });
    for (const id of BAD_IDS) {
      await expect(store.acquire(`other${keys}`, id, 1, 60_000)).rejects.toBeInstanceOf(InvalidKeyError);
      await expect(store.renew(key, id, 60_000)).rejects.toBeInstanceOf(InvalidKeyError);
      await expect(store.release(key, id)).rejects.toBeInstanceOf(InvalidKeyError);
    }
    expect(await store.held(key)).toBe(1);
    expect(await store.held(`other${keys}`)).toBe(0);
  });

  it('rejects a bad limit with InvalidParamsError, granting nothing', async () => {
    const store = create();
    const key = `k${++keys}`;
    expect(await store.acquire(key, 'h1', 1, 60_000)).toMatchObject({ granted: true });
    for (const limit of BAD_LIMITS) {
      await expect(store.acquire(key, 'h2', limit, 60_000)).rejects.toBeInstanceOf(InvalidParamsError);
    }
    expect(await store.held(key)).toBe(1);
    expect(await store.acquire(key, 'h2', 1, 60_000)).toMatchObject({ granted: false, held: 1 });
  });

  it('rejects a bad holdMs with InvalidDurationError in acquire and renew; the live hold is neither released nor moved', async () => {
    const store = create();
    const key = `k${++keys}`;
    expect(await store.acquire(key, 'h1', 2, 60_000)).toMatchObject({ granted: true });
    for (const holdMs of BAD_HOLD_MS) {
      await expect(store.acquire(key, 'h2', 2, holdMs)).rejects.toBeInstanceOf(InvalidDurationError);
      await expect(store.renew(key, 'h1', holdMs)).rejects.toBeInstanceOf(InvalidDurationError);
    }
    expect(await store.held(key)).toBe(1);
    expect(await store.renew(key, 'h1', 60_000)).toBe(true);
  });
});

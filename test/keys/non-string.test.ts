import { describe, expect, it } from 'vitest';
import { createConcurrencyLimiter, memoryHolds, reserve } from '../../src/concurrency/index.js';
import {
  createLeasedLimiter,
  createMemoryLimiter,
  createShardedLimiter,
  gcra,
  InvalidKeyError,
  type Limiter,
} from '../../src/index.js';
import { createAcquirer } from '../../src/outbound/index.js';
import { withFailurePolicy } from '../../src/policy/index.js';
import { createRedisLimiter } from '../../src/stores/redis/index.js';
import { useRedisServer } from '../support/redis-server.js';

/*
 * A key from JavaScript that is not a string (an id read as a number, a missing field, a parsed
 * object) must never be coerced: String() would give every such caller one shared bucket
 * ('undefined', '[object Object]', 'NaN'). Every entry point that takes a key rejects it.
 */

const { redis } = useRedisServer();
const NOT_STRINGS: unknown[] = [42, Number.NaN, undefined, null, { id: 'u1' }, ['u1'], true, Symbol('k')];
const algorithm = gcra({ limit: 5, periodMs: 60_000 });
const memory = () => createMemoryLimiter({ algorithm, clock: () => 0, pruneIntervalMs: 0 });

async function expectRejects(call: (key: string) => Promise<unknown> | unknown): Promise<void> {
  for (const key of NOT_STRINGS) {
    await expect(
      (async () => call(key as string))(),
      `key ${typeof key === 'symbol' ? 'a symbol' : JSON.stringify(key)}`,
    ).rejects.toBeInstanceOf(InvalidKeyError);
  }
}

async function expectEveryCallRejects(limiter: Limiter): Promise<void> {
  await expectRejects((key) => limiter.limit(key));
  await expectRejects((key) => limiter.peek(key));
  await expectRejects((key) => limiter.reset(key));
  await expectRejects((key) => limiter.block?.(key, 1_000));
  if (limiter.refund) await expectRejects((key) => limiter.refund?.(key, 1));
}

describe('a key that is not a string is InvalidKeyError at every entry point', () => {
  it('memory limiter, async and synchronous calls; nothing stored', async () => {
    const limiter = memory();
    await expectEveryCallRejects(limiter);
    await expectRejects((key) => limiter.limitSync(key));
    await expectRejects((key) => limiter.peekSync(key));
    expect(limiter.size).toBe(0);
  });

  it('Redis limiter (real redis-server): nothing written', async () => {
    const prefix = 'non-string:';
    await expectEveryCallRejects(createRedisLimiter({ client: redis(), algorithm, prefix }));
    expect(await redis().keys(`${prefix}*`)).toEqual([]);
  });

  it('leased (limit and tryLimit), sharded and policy-wrapped limiters', async () => {
    const leased = createLeasedLimiter({ remote: memory(), leaseSize: 2 });
    await expectEveryCallRejects(leased);
    await expectRejects((key) => leased.tryLimit(key));
    await expectEveryCallRejects(
      createShardedLimiter({ algorithm, shards: 2, create: (shard) => createMemoryLimiter({ algorithm: shard }) }),
    );
    await expectEveryCallRejects(withFailurePolicy(memory(), { failure: 'open' }));
  });

  it('concurrency acquire, reserve and the outbound acquirer', async () => {
    const concurrency = createConcurrencyLimiter({ limit: 1, holdMs: 1_000, store: memoryHolds() });
    await expectRejects((key) => concurrency.acquire(key));
    await expectRejects((key) => concurrency.held(key));
    await expectRejects((key) => reserve(memory(), key, 1));
    const acquirer = createAcquirer(memory());
    await expectRejects((key) => acquirer.acquire(key));
    await expectRejects((key) => acquirer.pause(key, 1_000));
    acquirer.close();
  });
});

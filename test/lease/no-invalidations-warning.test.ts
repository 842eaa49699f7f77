import { describe, expect, it } from 'vitest';
import { ConfigError, createLeasedLimiter, createMemoryLimiter, createShardedLimiter, gcra } from '../../src/index.js';
import { withFailurePolicy } from '../../src/policy/index.js';
import { createRedisLimiter } from '../../src/stores/redis/index.js';
import type { SluiceWarning } from '../../src/warnings.js';
import { useRedisServer } from '../support/redis-server.js';
import { subscribersOf } from '../support/subscribers.js';

/*
 * A leased instance serves from what it holds, so a reset, block or invalidate made on another
 * instance reaches it only through the remote's invalidations. A Redis limiter built without a
 * subscriber has none, and nothing said so: blocks silently stopped at the instance that made them.
 */

const { redis } = useRedisServer({ connections: 2 });
const subscriber = subscribersOf(redis);
const algorithm = gcra({ limit: 100, periodMs: 60_000 });
let prefixes = 0;
const redisRemote = (options: { subscriber?: unknown } = {}) =>
  createRedisLimiter({ client: redis(), algorithm, prefix: `nowarn${++prefixes}:`, onWarning: false, ...options });

function leasedWarnings(remote: Parameters<typeof createLeasedLimiter>[0]['remote']): SluiceWarning[] {
  const warnings: SluiceWarning[] = [];
  createLeasedLimiter({ remote, leaseSize: 10, onWarning: (warning) => warnings.push(warning) });
  return warnings;
}

describe('SLUICE_LEASE_NO_INVALIDATIONS', () => {
  it('warns once, at construction, over a Redis limiter without a subscriber (also policy-wrapped or sharded)', () => {
    for (const remote of [
      redisRemote(),
      withFailurePolicy(redisRemote(), { failure: 'open' }),
      createShardedLimiter({
        algorithm,
        shards: 2,
        create: (shard) => createRedisLimiter({ client: redis(), algorithm: shard, prefix: `nowarn${++prefixes}:` }),
      }),
    ]) {
      const warnings = leasedWarnings(remote);
      expect(warnings).toHaveLength(1);
      expect(warnings[0]?.code).toBe('SLUICE_LEASE_NO_INVALIDATIONS');
      expect(warnings[0]?.message).toMatch(/subscriber/);
      expect(warnings[0]?.message).toMatch(/docs\/errors\.md#sluice_lease_no_invalidations/);
    }
  });

  it('says nothing over a Redis limiter with a subscriber, or over a memory limiter', () => {
    expect(leasedWarnings(redisRemote({ subscriber: subscriber(1) }))).toEqual([]);
    expect(leasedWarnings(createMemoryLimiter({ algorithm }))).toEqual([]);
  });

  it('by default through process.emitWarning with its code; onWarning: false silences it; a bad sink is ConfigError', async () => {
    const seen: (Error & { code?: string })[] = [];
    const listener = (warning: Error) => seen.push(warning);
    process.on('warning', listener);
    try {
      createLeasedLimiter({ remote: redisRemote(), leaseSize: 10 });
      createLeasedLimiter({ remote: redisRemote(), leaseSize: 10, onWarning: false });
      await new Promise((resolve) => setImmediate(resolve)); // emitWarning delivers on the next tick
    } finally {
      process.off('warning', listener);
    }
    expect(seen.filter((warning) => warning.code === 'SLUICE_LEASE_NO_INVALIDATIONS')).toHaveLength(1);
    expect(() => createLeasedLimiter({ remote: redisRemote(), leaseSize: 10, onWarning: 'log' as never })).toThrow(
      ConfigError,
    );
  });

  it('what it warns of, on a real redis-server: a block on A never reaches B without a subscriber', async () => {
    const prefix = `nowarn${++prefixes}:`;
    const remote = (options: { subscriber?: unknown }) =>
      createRedisLimiter({ client: redis(0), algorithm, prefix, onWarning: false, ...options });
    const a = createLeasedLimiter({ remote: remote({}), leaseSize: 10, onWarning: false });
    const deaf = createLeasedLimiter({ remote: remote({}), leaseSize: 10, onWarning: false });
    const told = createLeasedLimiter({ remote: remote({ subscriber: subscriber(1) }), leaseSize: 10 });
    await expect.poll(() => told.remote.invalidations?.live).toBe(true);
    expect((await deaf.limit('k')).allowed).toBe(true);
    expect((await told.limit('k')).allowed).toBe(true);
    await a.block?.('k', 60_000);
    await expect.poll(async () => (await told.limit('k')).allowed).toBe(false);
    expect((await deaf.limit('k')).allowed).toBe(true); // served from its lease: the block never reached it
  });
});

import { describe, expect, it } from 'vitest';
import { createLeasedLimiter, type Decision, gcra } from '../../src/index.js';
import { createRedisLimiter } from '../../src/stores/redis/index.js';
import { held } from '../support/held-keys.js';
import { useRedisServer } from '../support/redis-server.js';

const { redis } = useRedisServer();

/*
 * A leased limiter denies a blocked key as the plain limiter does, `reason: 'blocked'` and
 * `remaining: 0`. A call it cannot lease for (cost 0, or a cost above the limit) is reported by
 * the remote, and that report used to come back without the reason. A partial call used to spend
 * units held from before the block, admitting a key the remote had said is blocked.
 */

let prefixes = 0;
const pick = ({ allowed, remaining, reason }: Decision) => ({ allowed, remaining, reason });

function limiters() {
  const prefix = `blocked-report${++prefixes}:`;
  const algorithm = gcra({ limit: 10, periodMs: 60_000 });
  const plain = createRedisLimiter({ client: held(redis()), algorithm, prefix });
  const remote = createRedisLimiter({ client: held(redis()), algorithm, prefix });
  const leased = createLeasedLimiter({ remote, leaseSize: 5, onWarning: false });
  return { plain, leased };
}

describe('leasing: a blocked key is denied as blocked, as the plain Redis limiter denies it', () => {
  it.each([
    ['cost 0', 0],
    ['a cost above the limit', 11],
  ])('%s on a blocked key is denied as blocked, as the plain Redis limiter denies it', async (_name, cost) => {
    const { plain, leased } = limiters();
    await plain.block?.('k', 60_000);
    const direct = await plain.limit('k', { cost });
    expect(pick(direct)).toEqual({ allowed: false, remaining: 0, reason: 'blocked' });
    expect(pick(await leased.limit('k', { cost }))).toEqual(pick(direct));
    await leased.close();
  });

  it('a partial call on a key known to be blocked spends none of the units held from before the block', async () => {
    const { plain, leased } = limiters();
    expect((await leased.limit('k')).allowed).toBe(true); // leases 5: 4 held here
    await leased.block?.('k', 60_000);
    expect(pick(await leased.limit('k'))).toEqual({ allowed: false, remaining: 0, reason: 'blocked' });
    const partial = await leased.limit('k', { cost: 1, partial: true });
    expect(pick(partial)).toEqual({ allowed: false, remaining: 0, reason: 'blocked' });
    expect(partial.admitted ?? 0).toBe(0);
    expect(pick(partial)).toEqual(pick(await plain.limit('k', { cost: 1, partial: true })));
    await leased.close();
  });
});

import { describe, expect, it } from 'vitest';
import {
  createLeasedLimiter,
  createMemoryLimiter,
  fixedWindow,
  gcra,
  InvalidCostError,
  InvalidKeyError,
  type Limiter,
} from '../../src/index.js';
import { withFailurePolicy } from '../../src/policy/index.js';
import { manualClock } from '../../src/testing/index.js';
import { recordingRemote } from './support/recording-remote.js';

// A leased limiter takes refunds when its remote does: units go back on the key's local lease
// first, as far as it can still hold them, and the rest to the remote.

const HOUR_MS = 3_600_000;
const T = 36_000; // 100 per hour

function setup(leaseSize: number) {
  const clock = manualClock();
  const algorithm = gcra({ limit: 100, periodMs: HOUR_MS });
  const remote = recordingRemote(createMemoryLimiter({ algorithm, clock: clock.now, pruneIntervalMs: 0 }));
  const leased = createLeasedLimiter({ clock: clock.now, remote, leaseSize });
  const refund = leased.refund as NonNullable<Limiter['refund']>;
  return { clock, remote, leased, refund };
}

describe('refund through a leased limiter', () => {
  it('puts the units back on the local lease: no remote call, and the next requests spend them locally', async () => {
    const { remote, leased, refund } = setup(10);
    await leased.limit('k'); // leases 10, spends 1
    await leased.limit('k', { cost: 3 });
    const calls = remote.calls();
    await refund('k', 3);
    expect(remote.refunded).toEqual([]);
    expect(remote.calls()).toBe(calls);
    expect(leased.stats()).toMatchObject({ heldUnits: 9, refundedUnits: 3, returns: 0 });
    expect((await leased.peek('k')).remaining).toBe(99);
    for (let i = 0; i < 9; i++) expect((await leased.limit('k')).allowed).toBe(true);
    expect(remote.calls()).toBe(calls);
    await leased.limit('k');
    expect(remote.calls()).toBe(calls + 1);
  });

  it('sends the remote what the lease can no longer hold (slots already passed)', async () => {
    const { clock, remote, leased, refund } = setup(10);
    await leased.limit('k'); // lease of 10 at 0: its last slot is 10 T ahead; 9 held
    await leased.limit('k', { cost: 3 }); // 6 held
    clock.advance(2 * T + 1); // 7 slots still ahead: room for 1 more
    await refund('k', 3);
    expect(remote.refunded).toEqual([2]);
    // All 3 refunded: 1 kept on the lease, 2 passed on to the remote.
    expect(leased.stats()).toMatchObject({ heldUnits: 7, refundedUnits: 3, returns: 1, returnedUnits: 2 });
  });

  it('a key without a lease here refunds to the remote alone', async () => {
    const { remote, leased, refund } = setup(10);
    await remote.limit('elsewhere', { cost: 5 });
    await refund('elsewhere', 2);
    expect(remote.refunded).toEqual([2]);
    expect((await remote.peek('elsewhere')).remaining).toBe(97);
    expect(leased.stats()).toMatchObject({ refundedUnits: 2, returns: 1, returnedUnits: 2 });
  });

  it('rejects bad input with typed errors and changes nothing; 0 units is a no-op', async () => {
    const { remote, leased, refund } = setup(10);
    await leased.limit('k');
    await expect(refund('', 1)).rejects.toBeInstanceOf(InvalidKeyError);
    await expect(refund('k', -1)).rejects.toBeInstanceOf(InvalidCostError);
    await expect(refund('k', 1.5)).rejects.toBeInstanceOf(InvalidCostError);
    await refund('k', 0);
    expect(remote.refunded).toEqual([]);
    expect(leased.stats()).toMatchObject({ heldUnits: 9, refundedUnits: 0, returns: 0 });
  });

  it('over a remote that cannot refund (fixed window) the leased limiter has no refund', () => {
    const remote = createMemoryLimiter({ algorithm: fixedWindow({ limit: 10, windowMs: 1_000 }) });
    expect(createLeasedLimiter({ remote, leaseSize: 2 }).refund).toBeUndefined();
  });

  it('the documented stack (policy over leased) has refund, and it reaches the lease', async () => {
    const { remote, leased } = setup(10);
    const stack = withFailurePolicy(leased);
    await stack.limit('k'); // leases 10, spends 1
    await stack.limit('k', { cost: 2 });
    await (stack.refund as NonNullable<Limiter['refund']>)('k', 2);
    expect(leased.stats()).toMatchObject({ heldUnits: 9, refundedUnits: 2 });
    expect(remote.refunded).toEqual([]);
  });
});

import { describe, expect, it } from 'vitest';
import { gcra } from '../../src/algorithms/gcra.js';
import type { Decision } from '../../src/decision.js';
import { StoreUnavailableError } from '../../src/errors.js';
import { createLeasedLimiter } from '../../src/lease/leased-limiter.js';
import { createLocalFallback } from '../../src/policy/fallback.js';
import { withFailurePolicy } from '../../src/policy/with-failure-policy.js';
import { manualClock, memory } from '../http/support/scenarios.js';

const blockedAfter = (retryAfterMs: number, resetAfterMs: number, extra: Partial<Decision> = {}): Decision => ({
  allowed: false,
  limit: 10,
  remaining: 0,
  retryAfterMs,
  resetAfterMs,
  reason: 'blocked',
  ...extra,
});

describe('the blocks the local fallback knows of', () => {
  it('memory stays bounded by maxKeys under 10,000 attacker keys, each reported blocked', () => {
    const clock = manualClock();
    const fallback = createLocalFallback(
      gcra({ limit: 10, periodMs: 60_000 }),
      { instances: 1, maxKeys: 100 },
      clock.read,
    );
    for (let i = 0; i < 10_000; i++) fallback.blocks.observe(`attacker:${i}`, blockedAfter(60_000, 60_000));
    expect(fallback.blocks.size()).toBe(100);
    // The most recent are kept; the oldest went first.
    expect(fallback.blocks.leftMs('attacker:9999')).toBe(60_000);
    expect(fallback.blocks.leftMs('attacker:0')).toBe(0);
    for (let i = 0; i < 10_000; i++) fallback.blocks.block(`issued:${i}`, 1_000);
    expect(fallback.blocks.size()).toBe(100);
  });

  it("ends at the block's end: the denial's retry, its reset when the retry is Infinity; ordinary and degraded decisions teach nothing", () => {
    const clock = manualClock();
    const { blocks } = createLocalFallback(gcra({ limit: 10, periodMs: 60_000 }), { instances: 1 }, clock.read);
    blocks.observe('a', blockedAfter(5_000, 9_000)); // the block outlasts the algorithm's wait: retry is its end
    blocks.observe('b', blockedAfter(Number.POSITIVE_INFINITY, 7_000)); // a cost above the limit
    blocks.observe('c', { ...blockedAfter(0, 0), allowed: true, reason: undefined });
    blocks.observe('d', blockedAfter(5_000, 5_000, { degraded: true }));
    expect(['a', 'b', 'c', 'd'].map((key) => blocks.leftMs(key))).toEqual([5_000, 7_000, 0, 0]);
    clock.advance(4_999);
    expect(blocks.leftMs('a')).toBe(1);
    clock.advance(1);
    expect([blocks.leftMs('a'), blocks.leftMs('b')]).toEqual([0, 2_000]);
    expect(blocks.size()).toBe(1); // an expired block is dropped when met
  });

  it('kept when the instance count changes and the local limiter is rebuilt', async () => {
    const clock = manualClock();
    let instances = 1;
    const fallback = createLocalFallback(
      gcra({ limit: 10, periodMs: 60_000 }),
      { instances: { instances: () => instances } },
      clock.read,
    );
    fallback.blocks.block('k', 1_000);
    instances = 2;
    expect(fallback.current().instances).toBe(2);
    expect(fallback.blocks.leftMs('k')).toBe(1_000);
    await fallback.close();
  });

  it('when full, drops the oldest block recorded, never a live one because it ends sooner', () => {
    const clock = manualClock();
    const { blocks } = createLocalFallback(
      gcra({ limit: 10, periodMs: 60_000 }),
      { instances: 1, maxKeys: 2 },
      clock.read,
    );
    blocks.block('first', 10_000);
    blocks.block('second', 20_000);
    blocks.block('third', 30_000);
    expect(['first', 'second', 'third'].map((key) => blocks.leftMs(key))).toEqual([0, 20_000, 30_000]);
    blocks.observe('fourth', blockedAfter(40_000, 40_000));
    expect(['second', 'third', 'fourth'].map((key) => blocks.leftMs(key))).toEqual([0, 30_000, 40_000]);
    expect(blocks.size()).toBe(2);
  });

  it("learns a leased limiter's blocked denial to the block's end, though its reset leaves out the units held", async () => {
    const clock = manualClock();
    const remote = memory(gcra({ limit: 100, periodMs: 60_000 }), clock.read);
    const leased = createLeasedLimiter({ remote, leaseSize: 25, clock: clock.read, onWarning: false });
    expect((await leased.limit('k')).allowed).toBe(true); // 24 units stay held here
    await remote.block?.('k', 10_000);
    const denial = await leased.limit('k');
    expect(denial).toMatchObject({ allowed: false, reason: 'blocked', retryAfterMs: 10_000 });
    const { blocks } = createLocalFallback(gcra({ limit: 100, periodMs: 60_000 }), { instances: 1 }, clock.read);
    blocks.observe('k', denial);
    expect(blocks.leftMs('k')).toBe(10_000);
    await leased.close();
  });

  it('a blocked decision the store took before an unblock, delivered after it, teaches nothing', async () => {
    const clock = manualClock();
    const store = memory(gcra({ limit: 10, periodMs: 60_000 }), clock.read);
    let down = false;
    let open: () => void = () => {};
    let gate: Promise<void> | undefined;
    const slow = {
      ...store,
      async limit(key: string) {
        if (down) throw new StoreUnavailableError('down');
        const decision = await store.limit(key);
        await gate;
        return decision;
      },
    };
    const limiter = withFailurePolicy(slow, {
      failure: 'fallback',
      fallback: { instances: 1 },
      deadlineMs: 60_000,
      clock: clock.read,
      onWarning: false,
    });
    await store.block?.('k', 60_000);
    gate = new Promise((resolve) => {
      open = resolve;
    });
    const inFlight = limiter.limit('k');
    await new Promise((resolve) => setImmediate(resolve));
    await limiter.unblock?.('k');
    open();
    expect(await inFlight).toMatchObject({ allowed: false, reason: 'blocked' });
    down = true;
    expect(await limiter.limit('k')).toMatchObject({ allowed: true, degraded: true });
    await limiter.close();
  });
});

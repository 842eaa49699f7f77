import { describe, expect, it } from 'vitest';
import {
  type Algorithm,
  ConfigError,
  createLeasedLimiter,
  createMemoryLimiter,
  type Decision,
  fixedWindow,
  gcra,
  type LeasedLimiterOptions,
  StoreUnavailableError,
  slidingWindowLog,
} from '../../src/index.js';
import { manualClock } from '../../src/testing/index.js';
import { recordingRemote } from './support/recording-remote.js';

const HOUR_MS = 3_600_000;
const T = 36_000; // 100 per hour

function setup(
  leaseSize: number,
  {
    algorithm = gcra({ limit: 100, periodMs: HOUR_MS }),
    ...options
  }: Partial<LeasedLimiterOptions> & {
    algorithm?: Algorithm;
  } = {},
) {
  const clock = manualClock();
  const remote = recordingRemote(createMemoryLimiter({ algorithm, clock: clock.now, pruneIntervalMs: 0 }));
  const leased = createLeasedLimiter({ clock: clock.now, ...options, remote, leaseSize });
  return { clock, remote, leased };
}

async function admitted(decisions: Promise<Decision>[]): Promise<number> {
  return (await Promise.all(decisions)).filter((decision) => decision.allowed).length;
}

describe('rules 2 and 3: local service, lease, shortfall, cached refusal', () => {
  it('serves leaseSize requests per remote call, then asks for the shortfall, then caches the refusal', async () => {
    const { remote, leased } = setup(30);
    const decisions: Decision[] = [];
    for (let i = 0; i < 120; i++) decisions.push(await leased.limit('k'));
    expect(decisions.filter((d) => d.allowed)).toHaveLength(100);
    // Three leases of 30, then 10 left: each of the last 10 is refused 30 and granted 1;
    // the 101st is refused 30 and 1 and caches the refusal; the other 19 ask nothing.
    expect(remote.asked).toEqual([30, 30, 30, ...Array.from({ length: 11 }, () => [30, 1]).flat()]);
    expect(leased.stats()).toMatchObject({ requests: 120, leases: 13, refusals: 1, cachedDenials: 19 });
  });

  it('a cached refusal answers like the remote: exact retry-after, then asks again at retry-after', async () => {
    const { clock, remote, leased } = setup(1, { algorithm: gcra({ limit: 5, periodMs: 10_000 }) });
    await leased.limit('k', { cost: 5 });
    const refused = await leased.limit('k', { cost: 2 });
    expect(refused).toEqual({ allowed: false, limit: 5, remaining: 0, retryAfterMs: 4000, resetAfterMs: 10_000 });
    const calls = remote.calls();
    clock.advance(1000);
    expect(await leased.limit('k', { cost: 2 })).toEqual({ ...refused, retryAfterMs: 3000, resetAfterMs: 9000 });
    expect(await leased.limit('k', { cost: 3 })).toEqual({ ...refused, retryAfterMs: 5000, resetAfterMs: 9000 });
    clock.advance(2999);
    expect((await leased.limit('k', { cost: 2 })).retryAfterMs).toBe(1);
    expect(remote.calls()).toBe(calls);
    // A smaller request is not covered by the refusal: the remote decides it.
    expect((await leased.limit('k', { cost: 1 })).allowed).toBe(true);
    expect(remote.calls()).toBe(calls + 1);
    // That admission moved the key on: the refusal it superseded is not trusted any longer.
    clock.advance(1);
    expect(await leased.limit('k', { cost: 2 })).toMatchObject({ allowed: false, retryAfterMs: 2000 });
    expect(remote.calls()).toBe(calls + 2);
    clock.advance(2000);
    expect((await leased.limit('k', { cost: 2 })).allowed).toBe(true);
  });

  it('a cost above the limit is denied with Infinity, from the remote for an unknown key, locally after', async () => {
    const { remote, leased } = setup(5, { algorithm: gcra({ limit: 5, periodMs: 10_000 }) });
    const never = { allowed: false, limit: 5, remaining: 5, retryAfterMs: Number.POSITIVE_INFINITY, resetAfterMs: 0 };
    expect(await leased.limit('k', { cost: 6 })).toEqual(never);
    expect(await leased.limit('k', { cost: 6 })).toEqual(never);
    expect(remote.asked).toEqual([6]);
  });
});

describe('rule 4: one lease in flight per key', () => {
  it('1,000 concurrent calls on a cold key, leaseSize 100, limit 10,000: 1 remote call, for all of them', async () => {
    const { remote, leased } = setup(100, { algorithm: gcra({ limit: 10_000, periodMs: HOUR_MS }) });
    const calls = Array.from({ length: 1000 }, () => leased.limit('hot'));
    expect(await admitted(calls)).toBe(1000);
    // The calls of one turn queue before the first is sent: it asks for max(100, 1,000).
    expect(remote.asked).toEqual([1000]);
    expect(leased.stats()).toMatchObject({ remoteCalls: 1, leases: 1, localHits: 999, waited: 999 });
  });

  it('callers of a key wait for its lease; callers of other keys do not', async () => {
    const { remote, leased } = setup(10);
    const release = remote.hold('slow');
    const slow = [leased.limit('slow'), leased.limit('slow')];
    let slowSettled = false;
    void Promise.all(slow).then(() => {
      slowSettled = true;
    });
    expect((await leased.limit('fast')).allowed).toBe(true);
    expect(leased.tryLimit('slow')).toBeUndefined();
    expect(slowSettled).toBe(false);
    release();
    expect(await admitted(slow)).toBe(2);
    expect(remote.asked).toEqual([10, 10]);
  });

  it('a failed lease rejects its request and every request queued behind it; the next call asks again', async () => {
    const clock = manualClock();
    const inner = createMemoryLimiter({ algorithm: gcra({ limit: 100, periodMs: HOUR_MS }), clock: clock.now });
    let failing = true;
    const remote = {
      ...inner,
      limit: (key: string, options?: { cost?: number }) =>
        failing ? Promise.reject(new StoreUnavailableError('down')) : inner.limit(key, options),
    };
    const leased = createLeasedLimiter({ remote, leaseSize: 10, clock: clock.now });
    const calls = [leased.limit('k'), leased.limit('k'), leased.limit('k')];
    for (const call of calls) await expect(call).rejects.toBeInstanceOf(StoreUnavailableError);
    expect(leased.stats()).toMatchObject({ remoteCalls: 1, remoteErrors: 1, requests: 0 });
    failing = false;
    expect((await leased.limit('k')).remaining).toBe(99);
  });
});

describe('rule 5: leased units expire when the remote has regenerated them', () => {
  it('unit by unit, one per T after the lease, none after lease size × T', async () => {
    const { clock, leased } = setup(20);
    await leased.limit('k');
    expect(leased.stats().heldUnits).toBe(19);
    clock.advance(T + 1);
    expect(leased.stats().heldUnits).toBe(18);
    clock.advance(17 * T);
    expect(leased.stats().heldUnits).toBe(1);
    clock.advance(T);
    expect(leased.stats()).toMatchObject({ heldUnits: 0, expiredUnits: 19 });
  });

  it('a lease taken behind a backlog lives lease size × T (rule 5), although its slots are further ahead', async () => {
    const { clock, remote, leased } = setup(20);
    await remote.limit('k', { cost: 60 }); // another instance: the key's schedule runs 60 T ahead
    await leased.limit('k');
    clock.advance(20 * T - 1);
    expect(leased.stats().heldUnits).toBe(19);
    clock.advance(1);
    expect(leased.stats().heldUnits).toBe(0);
  });

  it('after expiry the instance leases again instead of spending stale units on top of fresh quota', async () => {
    const { clock, remote, leased } = setup(20);
    await leased.limit('k');
    clock.advance(20 * T);
    expect((await leased.limit('k')).remaining).toBe(99);
    expect(remote.asked).toEqual([20, 20]);
  });
});

describe('rule 6: leaseSize 1 is the remote alone', () => {
  const algorithms: [string, () => Algorithm][] = [
    ['gcra', () => gcra({ limit: 5, periodMs: 10_000 })],
    ['fixed-window', () => fixedWindow({ limit: 5, windowMs: 10_000 })],
    ['sliding-window-log', () => slidingWindowLog({ limit: 5, windowMs: 10_000 })],
  ];
  it.each(algorithms)(
    '%s: same allowed/denied sequence; remote calls = remote-alone calls − cached denials',
    async (_, build) => {
      const clock = manualClock();
      const algorithm = build();
      const alone = createMemoryLimiter({ algorithm, clock: clock.now, pruneIntervalMs: 0 });
      const remote = recordingRemote(createMemoryLimiter({ algorithm, clock: clock.now, pruneIntervalMs: 0 }));
      const leased = createLeasedLimiter({ remote, leaseSize: 1, clock: clock.now });
      let seed = 7;
      const random = () => {
        seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
        return seed / 2 ** 31;
      };
      for (let i = 0; i < 2000; i++) {
        clock.advance(Math.floor(random() * 1500));
        const cost = Math.floor(random() * 4);
        const expected = await alone.limit('k', { cost });
        const actual = await leased.limit('k', { cost });
        expect(actual.allowed).toBe(expected.allowed);
        if (actual.allowed || algorithm.name !== 'sliding-window-log') expect(actual).toEqual(expected);
      }
      // Every request the remote alone would have decided reached it, except those a cached
      // refusal denied and the cost-0 reports answered from what the instance knows.
      const stats = leased.stats();
      expect(remote.calls()).toBe(2000 - stats.cachedDenials - stats.localHits);
      expect(stats.cachedDenials).toBeGreaterThan(100);
    },
  );
});

describe('rule 7: honest remaining', () => {
  it('is the unspent local units plus the remote remaining, regenerated since, clamped to the limit', async () => {
    const { clock, remote, leased } = setup(20);
    expect((await leased.limit('k')).remaining).toBe(99);
    expect((await leased.limit('k', { cost: 4 })).remaining).toBe(95);
    await remote.limit('k', { cost: 30 }); // another instance spends 30, unseen here
    expect((await leased.limit('k')).remaining).toBe(94);
    clock.advance(2 * T);
    // Two units regenerated upstream; the 14 held units are the latest slots, still ahead.
    expect((await leased.limit('k')).remaining).toBe(13 + 82);
    // A peek with units at hand answers from them too, without a remote call.
    const calls = remote.calls();
    expect(await leased.peek('k')).toMatchObject({ allowed: true, remaining: 13 + 82 });
    expect(remote.calls()).toBe(calls);
  });
});

describe('rule 8 and the synchronous hot path', () => {
  it('tryLimit decides lease hits and cached refusals synchronously and says when it needs the remote', async () => {
    const { remote, leased } = setup(5, { algorithm: gcra({ limit: 10, periodMs: HOUR_MS }) });
    expect(leased.tryLimit('k')).toBeUndefined();
    await leased.limit('k');
    for (let i = 0; i < 4; i++) expect(leased.tryLimit('k')?.allowed).toBe(true);
    expect(leased.tryLimit('k')).toBeUndefined();
    await leased.limit('k');
    for (let i = 0; i < 4; i++) leased.tryLimit('k');
    expect((await leased.limit('k')).allowed).toBe(false);
    expect(leased.tryLimit('k')).toMatchObject({ allowed: false, retryAfterMs: 10 * T });
    expect(leased.tryLimit('k', { cost: 11 })).toMatchObject({ retryAfterMs: Number.POSITIVE_INFINITY });
    expect(() => leased.tryLimit('')).toThrow(expect.objectContaining({ code: 'ERR_SLUICE_INVALID_KEY' }));
    expect(() => leased.tryLimit('k', { cost: -1 })).toThrow(
      expect.objectContaining({ code: 'ERR_SLUICE_INVALID_COST' }),
    );
    expect(remote.asked).toEqual([5, 5, 5, 1]);
    expect(leased.stats()).toMatchObject({
      requests: 13,
      localHits: 8,
      cachedDenials: 2,
      remoteCalls: 4,
      leases: 2,
      leasedUnits: 10,
      refusals: 1,
    });
  });

  it('invalid calls reject with typed errors and change nothing', async () => {
    const { remote, leased } = setup(5);
    await expect(leased.limit('', {})).rejects.toMatchObject({ code: 'ERR_SLUICE_INVALID_KEY' });
    await expect(leased.limit('k', { cost: 1.5 })).rejects.toMatchObject({ code: 'ERR_SLUICE_INVALID_COST' });
    await expect(leased.peek('k'.repeat(513))).rejects.toMatchObject({ code: 'ERR_SLUICE_INVALID_KEY' });
    expect(remote.calls()).toBe(0);
    expect(leased.stats().keys).toBe(0);
  });
});

describe('peek, reset, and a policy-wrapped remote', () => {
  it('peek answers from held units, else asks the remote and adds what is held', async () => {
    const { remote, leased } = setup(20);
    expect(await leased.peek('cold')).toMatchObject({ allowed: true, remaining: 100 });
    await leased.limit('k', { cost: 5 });
    expect(await leased.peek('k')).toMatchObject({ allowed: true, remaining: 95 });
    expect(remote.calls()).toBe(2);
    await leased.limit('k', { cost: 95 });
    expect(remote.asked).toEqual([20, 80]);
    const peeked = await leased.peek('k');
    expect(peeked).toMatchObject({ allowed: false, remaining: 0, retryAfterMs: T });
    expect(await leased.limit('k')).toEqual(peeked);
  });

  it('reset forgets the key here and at the remote', async () => {
    const { remote, leased } = setup(20);
    await leased.limit('k');
    await leased.reset('k');
    expect(leased.stats()).toMatchObject({ keys: 0, heldUnits: 0 });
    expect((await remote.peek('k')).remaining).toBe(100);
    expect((await leased.limit('k')).remaining).toBe(99);
  });

  it('a degraded reply (the remote is policy-wrapped) is passed through and leases nothing', async () => {
    const clock = manualClock();
    const inner = createMemoryLimiter({ algorithm: gcra({ limit: 100, periodMs: HOUR_MS }), clock: clock.now });
    const openDecision: Decision = {
      allowed: true,
      limit: 100,
      remaining: 100,
      retryAfterMs: 0,
      resetAfterMs: 0,
      degraded: true,
      degradedReason: 'timeout',
      failure: 'open',
    };
    const remote = { ...inner, limit: () => Promise.resolve({ ...openDecision }) };
    const leased = createLeasedLimiter({ remote, leaseSize: 10, clock: clock.now });
    expect(await leased.limit('k')).toEqual(openDecision);
    expect(await leased.limit('k')).toEqual(openDecision);
    expect(leased.tryLimit('k')).toBeUndefined();
    expect(leased.stats()).toMatchObject({ remoteCalls: 2, leases: 0, heldUnits: 0 });
  });
});

describe('lease return', () => {
  it('returns the unspent units of keys idle for returnIdleMs, and forgets those keys', async () => {
    const { clock, remote, leased } = setup(20, { returnIdleMs: 1000, returnCheckIntervalMs: 0 });
    await leased.limit('idle');
    await leased.limit('busy');
    clock.advance(600);
    await leased.limit('busy');
    clock.advance(400);
    expect(await leased.returnIdle()).toBe(19);
    expect(remote.refunded).toEqual([19]);
    expect(leased.stats()).toMatchObject({ keys: 1, returns: 1, returnedUnits: 19, heldUnits: 18 });
    expect((await remote.peek('idle')).remaining).toBe(99);
  });

  it('with return on, a cached refusal is trusted for at most returnIdleMs, then the remote is asked', async () => {
    const { clock, remote, leased } = setup(1, { returnIdleMs: 1000, returnCheckIntervalMs: 0 });
    await leased.limit('k', { cost: 100 });
    expect((await leased.limit('k')).retryAfterMs).toBe(T);
    clock.advance(999);
    expect((await leased.limit('k')).retryAfterMs).toBe(T - 999);
    expect(remote.calls()).toBe(2);
    clock.advance(1);
    expect((await leased.limit('k')).retryAfterMs).toBe(T - 1000);
    expect(remote.calls()).toBe(3);
  });

  it('close() returns every unspent unit and closes the remote', async () => {
    const { remote, leased } = setup(20);
    await leased.limit('a');
    await leased.limit('b', { cost: 5 });
    await leased.close();
    expect(remote.refunded.sort((a, b) => a - b)).toEqual([15, 19]);
    expect(remote.granted()).toBe(6);
  });

  it('an evicted key returns its units (maxKeys bounds the local state)', async () => {
    const { remote, leased } = setup(20, { maxKeys: 2 });
    for (const key of ['a', 'a', 'b', 'c', 'd', 'e', 'a']) await leased.limit(key);
    expect(leased.stats().keys).toBe(2);
    expect(remote.refunded).toEqual([18, 19, 19, 19]);
    expect(remote.granted()).toBe(7 + 2 * 19);
  });
});

describe('adaptive lease size', () => {
  it('shrinks leases toward 1 once the remote holds fewer than 4 leases worth', async () => {
    const { remote, leased } = setup(10, { adaptive: true });
    for (let i = 0; i < 110; i++) await leased.limit('k');
    // ⌊remaining / 4⌋ once the remote holds fewer than 40: 30 → 7, 23 → 5, 18 → 4, 14 → 3, 11 → 2,
    // 9 → 2, then 1 at a time; the final 1 is refused and cached.
    expect(remote.asked).toEqual([10, 10, 10, 10, 10, 10, 10, 7, 5, 4, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1]);
    expect(leased.stats()).toMatchObject({ leasedUnits: 100, refusals: 1 });
  });
});

describe('adaptive trim: a stale view took a full lease near exhaustion', () => {
  // The instance last heard 80 left; meanwhile others spent 56, so its lease of 20 leaves 4.
  it.each([
    ['gcra', gcra({ limit: 100, periodMs: HOUR_MS }), [13], 6],
    ['fixed-window (no refund: nothing to trim)', fixedWindow({ limit: 100, windowMs: HOUR_MS }), [], 19],
  ])('%s', async (_, algorithm, refunded, held) => {
    const { remote, leased } = setup(20, { adaptive: true, algorithm });
    await leased.limit('k');
    for (let i = 0; i < 19; i++) leased.tryLimit('k');
    await remote.limit('k', { cost: 56 });
    // Before the lease the remote held 24: keep ⌊24 / 4⌋ = 6, give 13 back; remaining is 23 either way.
    expect((await leased.limit('k')).remaining).toBe(23);
    expect(remote.refunded).toEqual(refunded);
    expect(leased.stats().heldUnits).toBe(held);
  });
});

describe('configuration', () => {
  const remote = createMemoryLimiter({ algorithm: gcra({ limit: 100, periodMs: HOUR_MS }) });
  it.each([
    ['leaseSize 0', { remote, leaseSize: 0 }],
    ['leaseSize above the limit', { remote, leaseSize: 101 }],
    ['fractional leaseSize', { remote, leaseSize: 2.5 }],
    ['no remote', { leaseSize: 5 }],
    ['adaptiveDivisor 1', { remote, leaseSize: 5, adaptive: true, adaptiveDivisor: 1 }],
    ['maxKeys 0', { remote, leaseSize: 5, maxKeys: 0 }],
    ['negative returnIdleMs', { remote, leaseSize: 5, returnIdleMs: -1 }],
    [
      'returnIdleMs over a remote without refund',
      {
        remote: createMemoryLimiter({ algorithm: fixedWindow({ limit: 5, windowMs: 1000 }) }),
        leaseSize: 2,
        returnIdleMs: 1000,
      },
    ],
  ])('%s throws ConfigError', (_, options) => {
    expect(() => createLeasedLimiter(options as LeasedLimiterOptions)).toThrow(ConfigError);
  });
});

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Algorithm } from '../../src/algorithms/types.js';
import { type Reservation, reserve } from '../../src/concurrency/index.js';
import {
  ConfigError,
  createLeasedLimiter,
  createMemoryLimiter,
  fixedWindow,
  gcra,
  InvalidCostError,
  isSluiceError,
  type LeasedLimiter,
  ReservationError,
  tokenBucket,
} from '../../src/index.js';

function setup(algorithm: Algorithm) {
  let nowMs = 0;
  const clock = () => nowMs;
  const limiter = createMemoryLimiter({ algorithm, clock, pruneIntervalMs: 0 });
  return { limiter, clock, advance: (ms: number) => (nowMs += ms) };
}

async function reserved(...args: Parameters<typeof reserve>): Promise<Reservation> {
  const answer = await reserve(...args);
  if (!answer.allowed) throw new Error('expected the reservation to be admitted');
  return answer.reservation;
}

// 10,000 tokens per minute: one token every 6 ms.
const tokensPerMinute = () => gcra({ limit: 10_000, periodMs: 60_000 });

describe('reservations on memory (GCRA)', () => {
  it('LLM-style: estimate 1,000 tokens, settle 640, the key gets 360 back', async () => {
    const { limiter, clock } = setup(tokensPerMinute());
    const reservation = await reserved(limiter, 'tenant', 1000, { clock });
    expect(limiter.peekSync('tenant').remaining).toBe(9000);
    await reservation.settle(640);
    expect(limiter.peekSync('tenant').remaining).toBe(9360);
  });

  it('denies like limit and charges nothing when denied', async () => {
    const { limiter, clock } = setup(tokensPerMinute());
    await limiter.limit('tenant', { cost: 9500 });
    const answer = await reserve(limiter, 'tenant', 1000, { clock });
    expect(answer.allowed).toBe(false);
    expect(answer.decision).toEqual(await limiter.limit('tenant', { cost: 1000 }));
    expect(limiter.peekSync('tenant').remaining).toBe(500);
  });

  it('settling above the estimate charges the excess as debt that delays the next admissions', async () => {
    const { limiter, clock } = setup(gcra({ limit: 1000, periodMs: 60_000 })); // T = 60 ms
    const reservation = await reserved(limiter, 'tenant', 1000, { clock });
    await reservation.settle(3000); // 2,000 units of debt past empty
    const next = limiter.limitSync('tenant');
    expect(next.allowed).toBe(false);
    expect(next.remaining).toBe(0);
    // 2,001 units must drain before one more fits: 2,001 × 60 ms.
    expect(next.retryAfterMs).toBe(2001 * 60);
  });

  it('cancel gives the whole estimate back; repeating a settlement is idempotent, another is a ReservationError', async () => {
    const { limiter, clock } = setup(tokensPerMinute());
    const reservation = await reserved(limiter, 'tenant', 1000, { clock });
    await Promise.all([reservation.cancel(), reservation.cancel()]);
    expect(limiter.peekSync('tenant').remaining).toBe(10_000);
    await expect(reservation.settle(640)).rejects.toBeInstanceOf(ReservationError);

    const second = await reserved(limiter, 'tenant', 1000, { clock });
    await second.settle(640);
    await second.settle(640);
    expect(limiter.peekSync('tenant').remaining).toBe(9360); // refunded once
    const error = await second.cancel().catch((caught: unknown) => caught);
    expect(isSluiceError(error, 'ERR_SLUICE_RESERVATION')).toBe(true);
    expect(limiter.peekSync('tenant').remaining).toBe(9360);
  });

  it('after ttlMs a reservation stands at its estimate: settle and cancel reject, nothing refunded', async () => {
    const { limiter, clock, advance } = setup(gcra({ limit: 10_000, periodMs: 3_600_000 }));
    const reservation = await reserved(limiter, 'tenant', 1000, { ttlMs: 5000, clock });
    await limiter.limit('control', { cost: 1000 }); // charged alike, never settled
    advance(5000);
    await expect(reservation.settle(10)).rejects.toThrow(/expired/);
    await expect(reservation.cancel()).rejects.toBeInstanceOf(ReservationError);
    expect(limiter.peekSync('tenant').remaining).toBe(limiter.peekSync('control').remaining);
  });

  it('rejects a bad actual with InvalidCostError and leaves the reservation open', async () => {
    const { limiter, clock } = setup(tokensPerMinute());
    const reservation = await reserved(limiter, 'tenant', 1000, { clock });
    await expect(reservation.settle(-1)).rejects.toBeInstanceOf(InvalidCostError);
    await expect(reservation.settle(0.5)).rejects.toBeInstanceOf(InvalidCostError);
    await reservation.settle(1000);
    expect(limiter.peekSync('tenant').remaining).toBe(9000);
  });

  it('ConfigError for a limiter that cannot refund, and for bad options, naming them', async () => {
    const { limiter: windows } = setup(fixedWindow({ limit: 10, windowMs: 1000 }));
    await expect(reserve(windows, 'k', 1)).rejects.toBeInstanceOf(ConfigError);
    const { limiter } = setup(tokensPerMinute());
    await expect(reserve(limiter, 'k', 1, { ttlMs: 0 })).rejects.toThrow(/ttlMs/);
    await expect(reserve(limiter, 'k', 1, { clock: 1 as never })).rejects.toThrow(/clock/);
    await expect(reserve(limiter, 'k', -1)).rejects.toBeInstanceOf(InvalidCostError);
  });
});

describe('reservations under a plan (params)', () => {
  it('a plan of 10,000/min over a limiter of 100,000/min: the refund and the debt are in the plan units', async () => {
    const { limiter, clock } = setup(gcra({ limit: 100_000, periodMs: 60_000 }));
    const plan = { limit: 10_000, periodMs: 60_000 };
    const remaining = async () => (await limiter.peek('k', { params: plan })).remaining;
    await (await reserved(limiter, 'k', 1000, { clock, params: plan })).settle(400);
    expect(await remaining()).toBe(9600);
    await (await reserved(limiter, 'k', 1000, { clock, params: plan })).settle(3000);
    expect(await remaining()).toBe(6600);
    await expect(reserve(limiter, 'k', 1, { params: { windowMs: 1 } })).rejects.toMatchObject({
      code: 'ERR_SLUICE_INVALID_PARAMS',
    });
  });
});

describe('reservations through leasing', () => {
  it('a leased limiter over a refundable remote reserves; settling below the estimate gives units back', async () => {
    const { limiter: remote, clock } = setup(gcra({ limit: 20, periodMs: 3_600_000 }));
    const leased = createLeasedLimiter({ remote, leaseSize: 10, clock });
    const reserved = await reserve(leased, 'k', 5, { clock });
    if (!reserved.allowed) throw new Error('the estimate should be admitted');
    expect((await leased.peek('k')).remaining).toBe(15);
    // The 3 unused units go back to this instance's lease first (docs/leasing.md): held again.
    await reserved.reservation.settle(2);
    expect((await leased.peek('k')).remaining).toBe(18);
    // Never more than was leased from the remote: 10 units, whatever was refunded.
    expect(remote.peekSync('k').remaining).toBe(10);
  });

  it('settling above the estimate charges the debt to the remote, which every instance leases from', async () => {
    const { limiter: remote, clock } = setup(gcra({ limit: 20, periodMs: 3_600_000 }));
    const [one, two] = [1, 2].map(() => createLeasedLimiter({ remote, leaseSize: 5, clock }));
    const reserved = await reserve(one as LeasedLimiter, 'k', 5, { clock });
    if (!reserved.allowed) throw new Error('the estimate should be admitted');
    await reserved.reservation.settle(20); // 15 units of debt: the remote is spent
    expect(remote.peekSync('k').remaining).toBe(0);
    expect((await (two as LeasedLimiter).limit('k')).allowed).toBe(false);
  });
});

describe('reservations on memory (token bucket)', () => {
  it('settle less refunds, more charges a deficit past empty, cancel refunds all', async () => {
    const { limiter, clock } = setup(tokenBucket({ capacity: 100, rate: 10, periodMs: 1000 })); // 1 token / 100 ms
    const first = await reserved(limiter, 'k', 60, { clock });
    await first.settle(20);
    expect(limiter.peekSync('k').remaining).toBe(80);
    const second = await reserved(limiter, 'k', 80, { clock });
    await second.settle(130); // 50 tokens past empty
    expect(limiter.peekSync('k')).toMatchObject({ allowed: false, remaining: 0, retryAfterMs: 5100 });
    const third = setup(tokenBucket({ capacity: 100, rate: 10, periodMs: 1000 }));
    const cancelled = await reserved(third.limiter, 'k', 100, { clock: third.clock });
    await cancelled.cancel();
    expect(third.limiter.peekSync('k').remaining).toBe(100);
  });
});

/*
 * The bound with settlements counted: at every admission at time t, the units charged before it
 * (estimates of open reservations, actuals of settled ones, so refunds and debt included) plus its
 * estimate stay within burst + ⌊(t − t₀) / T⌋, t₀ the first admission.
 */
describe('reservation bound (property)', () => {
  const steps = fc.array(
    fc.record({
      advanceMs: fc.integer({ min: 0, max: 400 }),
      estimate: fc.integer({ min: 0, max: 30 }),
      settle: fc.option(fc.record({ pick: fc.nat(), actual: fc.integer({ min: 0, max: 60 }) })),
    }),
    { minLength: 1, maxLength: 80 },
  );
  const cases: [string, () => Algorithm, (elapsedMs: number) => number][] = [
    [
      'GCRA 10 per s, burst 20',
      () => gcra({ limit: 10, periodMs: 1000, burst: 20 }),
      (ms) => 20 + Math.floor(ms / 100),
    ],
    [
      'token bucket 20, 10 per s',
      () => tokenBucket({ capacity: 20, rate: 10, periodMs: 1000 }),
      (ms) => 20 + Math.floor(ms / 100),
    ],
  ];
  for (const [name, algorithm, bound] of cases) {
    it(`${name}: admitted estimates plus settled adjustments stay within the bound`, async () => {
      await fc.assert(
        fc.asyncProperty(steps, async (scenario) => {
          const { limiter, clock, advance } = setup(algorithm());
          const open: Reservation[] = [];
          let charged = 0;
          let firstMs: number | undefined;
          for (const step of scenario) {
            advance(step.advanceMs);
            if (step.settle && open.length > 0) {
              const [reservation] = open.splice(step.settle.pick % open.length, 1) as [Reservation];
              await reservation.settle(step.settle.actual);
              charged += step.settle.actual - reservation.estimate;
            }
            const answer = await reserve(limiter, 'k', step.estimate, { clock, ttlMs: 1_000_000 });
            if (!answer.allowed) continue;
            firstMs ??= clock();
            charged += step.estimate;
            expect(charged).toBeLessThanOrEqual(bound(clock() - firstMs));
            open.push(answer.reservation);
          }
        }),
        { numRuns: 200 },
      );
    });
  }
});

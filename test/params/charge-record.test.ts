import { describe, expect, it } from 'vitest';
import { ChargeRecord } from '../../src/charge.js';
import { createMemoryLimiter, gcra, type Limiter, tokenBucket } from '../../src/index.js';
import { withFailurePolicy } from '../../src/policy/index.js';
import { createRedisLimiter } from '../../src/stores/redis/index.js';
import { useRedisServer } from '../support/redis-server.js';

// The record every give-back and debt of one admitted charge goes through: under the charge's
// own numbers, never more than stands, never twice.

const redis = useRedisServer({ connections: 1 });
const frozen = () => 1_000_000;
const base = gcra({ limit: 100_000, periodMs: 60_000 });
const plan = { limit: 10_000, periodMs: 60_000 };

const stores: [string, () => Limiter][] = [
  ['memory', () => createMemoryLimiter({ algorithm: base, clock: frozen, pruneIntervalMs: 0 })],
  [
    'redis',
    () =>
      createRedisLimiter({
        client: redis.redis(0),
        algorithm: base,
        prefix: `record-${Math.random()}:`,
        clock: frozen,
      }),
  ],
  [
    'memory under a failure policy',
    () => withFailurePolicy(createMemoryLimiter({ algorithm: base, clock: frozen, pruneIntervalMs: 0 }), {}),
  ],
];

/** Admits `cost` of key k under the plan and returns its record. */
async function admitted(limiter: Limiter, cost: number): Promise<ChargeRecord> {
  const decision = await limiter.limit('k', { cost, params: plan });
  expect(decision.allowed).toBe(true);
  return new ChargeRecord(limiter, 'k', cost, plan, undefined, decision.degraded !== true);
}

const remaining = async (limiter: Limiter) => (await limiter.peek('k', { params: plan })).remaining;

describe('ChargeRecord', () => {
  for (const [name, build] of stores) {
    describe(name, () => {
      it('a give-back goes back under the charge params, at most what stands, and a second one is a no-op', async () => {
        const limiter = build();
        await limiter.limit('k', { cost: 2000, params: plan }); // another charge, which must stay spent
        const record = await admitted(limiter, 1000);
        expect(await remaining(limiter)).toBe(7000);
        expect(await record.giveBack(400)).toBe(400);
        expect(record.standing).toBe(600);
        expect(await record.giveBack(5000)).toBe(600);
        expect(await record.giveBack()).toBe(0);
        expect(record.standing).toBe(0);
        expect(record.over).toBe(true);
        expect(await remaining(limiter)).toBe(8000);
      });

      it('debt is charged under the charge params; settle gives back or charges once', async () => {
        const limiter = build();
        const record = await admitted(limiter, 1000);
        await record.settle(2500);
        await record.settle(2500);
        expect(record.standing).toBe(2500);
        expect(await remaining(limiter)).toBe(7500);
        await expect(record.settle(100)).rejects.toMatchObject({ code: 'ERR_SLUICE_RESERVATION' });
        // An uncounted response after the settle gives back the settled units, debt included.
        expect(await record.giveBack()).toBe(2500);
        expect(await remaining(limiter)).toBe(10_000);
      });

      it('once over, a settle neither gives back nor charges', async () => {
        const limiter = build();
        await limiter.limit('k', { cost: 3000, params: plan });
        const record = await admitted(limiter, 1000);
        await record.giveBack();
        await record.settle(0);
        await record.settle(0);
        expect(await remaining(limiter)).toBe(7000);
        const late = await admitted(limiter, 1000);
        await late.giveBack();
        await late.settle(5000);
        expect(await remaining(limiter)).toBe(7000);
      });
    });
  }

  it('a charge the store never held (a failure policy admitted it) gives nothing back and charges no debt', async () => {
    const limiter = createMemoryLimiter({ algorithm: base, clock: frozen, pruneIntervalMs: 0 });
    await limiter.limit('k', { cost: 5000, params: plan });
    const record = new ChargeRecord(limiter, 'k', 1000, plan, 'open', false);
    expect(record.standing).toBe(0);
    expect(await record.giveBack()).toBe(0);
    await record.settle(4000);
    expect(await remaining(limiter)).toBe(5000);
  });

  it('a token bucket takes debt under the charge params too', async () => {
    const limiter = createMemoryLimiter({
      algorithm: tokenBucket({ capacity: 100_000, rate: 100_000, periodMs: 60_000 }),
      clock: frozen,
      pruneIntervalMs: 0,
    });
    const bucketPlan = { capacity: 10_000, rate: 10_000 };
    await limiter.limit('k', { cost: 1000, params: bucketPlan });
    await new ChargeRecord(limiter, 'k', 1000, bucketPlan, undefined, true).chargeDebt(1000);
    expect((await limiter.peek('k', { params: bucketPlan })).remaining).toBe(8000);
  });

  it('resetKey forgets the key and ends the charge: no later give-back or debt', async () => {
    const limiter = createMemoryLimiter({ algorithm: base, clock: frozen, pruneIntervalMs: 0 });
    const record = await admitted(limiter, 1000);
    await record.resetKey();
    await limiter.limit('k', { cost: 4000, params: plan });
    expect(await record.giveBack()).toBe(0);
    await record.chargeDebt(1000);
    expect(await remaining(limiter)).toBe(6000);
  });
});

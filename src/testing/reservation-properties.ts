import assert from 'node:assert/strict';
import { reserve } from '../concurrency/reservation.js';
import type { Limiter } from '../limiter.js';
import type { ManualClock } from './clock.js';

/** What a reservation property gets: a limiter of `limit` per `periodMs` on a manual clock, and a fresh key. */
export interface ReservationSetup {
  limiter: Limiter;
  clock: ManualClock;
  key: string;
  limit: number;
  periodMs: number;
}

async function rejectsWithCode(promise: Promise<unknown>, code: string): Promise<void> {
  await assert.rejects(promise, (error: unknown) => (error as { code?: string }).code === code);
}

async function admitted(...args: Parameters<typeof reserve>) {
  const answer = await reserve(...args);
  assert.equal(answer.allowed, true, `a reservation of ${args[2]} should be admitted`);
  return (answer as Extract<typeof answer, { allowed: true }>).reservation;
}

/**
 * Reservation properties (`reserve` from `sluice/concurrency`) for limiters with `refund` and
 * `charge`: settle and cancel give back exactly the difference, idempotently, with typed errors;
 * an expired reservation stands at its estimate; debt delays the next admissions by exactly the
 * units charged past the bound.
 */
export const reservationProperties = {
  'reservation-settle': async ({ limiter, clock, key, limit }: ReservationSetup) => {
    await (await admitted(limiter, key, limit, { clock: clock.now })).cancel();
    assert.equal((await limiter.peek(key)).remaining, limit, 'cancel gives the whole estimate back');

    const reservation = await admitted(limiter, key, 3, { clock: clock.now });
    assert.equal((await limiter.peek(key)).remaining, limit - 3, 'the estimate is charged at admission');
    await rejectsWithCode(reservation.settle(-1), 'ERR_SLUICE_INVALID_COST');
    await reservation.settle(1);
    assert.equal((await limiter.peek(key)).remaining, limit - 1, 'settling at 1 gives 2 back');
    await reservation.settle(1);
    assert.equal((await limiter.peek(key)).remaining, limit - 1, 'the same settlement again gives nothing back');
    await rejectsWithCode(reservation.settle(2), 'ERR_SLUICE_RESERVATION');
    await rejectsWithCode(reservation.cancel(), 'ERR_SLUICE_RESERVATION');
    assert.equal((await limiter.peek(key)).remaining, limit - 1, 'a rejected settlement changes nothing');

    await limiter.limit(key, { cost: limit - 1 });
    const full = await reserve(limiter, key, 1, { clock: clock.now });
    assert.equal(full.allowed, false, 'an exhausted key denies a reservation as limit would');
    assert.equal((await limiter.peek(key)).remaining, 0, 'and charges nothing');
  },

  'reservation-expiry': async ({ limiter, clock, key }: ReservationSetup) => {
    const control = `${key}:control`;
    const reservation = await admitted(limiter, key, 2, { clock: clock.now, ttlMs: 1000 });
    await limiter.limit(control, { cost: 2 }); // charged alike, never settled
    clock.advance(1000);
    await rejectsWithCode(reservation.settle(0), 'ERR_SLUICE_RESERVATION');
    await rejectsWithCode(reservation.cancel(), 'ERR_SLUICE_RESERVATION');
    assert.deepEqual(
      await limiter.peek(key),
      await limiter.peek(control),
      'an expired reservation stands at its estimate',
    );
  },

  'reservation-debt': async ({ limiter, clock, key, limit, periodMs }: ReservationSetup) => {
    const intervalMs = periodMs / limit;
    const reservation = await admitted(limiter, key, 2, { clock: clock.now });
    await reservation.settle(2 * limit); // limit units of debt past empty
    const next = await limiter.limit(key);
    assert.equal(next.allowed, false, 'debt delays the next admission');
    assert.equal(next.remaining, 0);
    // 2 × limit charged on a bucket of limit: limit + 1 units must come back before one fits.
    assert.equal(next.retryAfterMs, (limit + 1) * intervalMs, 'by exactly the units charged past the bound');
    clock.advance((limit + 1) * intervalMs - 1);
    assert.equal((await limiter.limit(key)).allowed, false, 'not a millisecond early');
    clock.advance(1);
    assert.equal((await limiter.limit(key)).allowed, true, 'then one unit');
    assert.equal((await limiter.limit(key)).allowed, false, 'and only one: the bound holds with the debt counted');
  },
} as const;

/** The names of the reservation properties. */
export type ReservationPropertyName = keyof typeof reservationProperties;

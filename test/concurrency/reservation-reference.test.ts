import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type Reservation, reserve } from '../../src/concurrency/index.js';
import { createMemoryLimiter, type Decision, gcra, isSluiceError, type Limiter } from '../../src/index.js';
import { createRedisLimiter } from '../../src/stores/redis/index.js';
import { gcraReference } from '../../src/testing/index.js';
import { useRedisServer } from '../support/redis-server.js';

const redis = useRedisServer({ connections: 1 });

// 10 units per second, burst 10: T = 100 ms. Estimates and actuals go past the burst.
const LIMIT = 10;
const PERIOD_MS = 1000;
const TTL_MS = 700;

type Step =
  | { kind: 'reserve'; key: string; estimate: number }
  | { kind: 'settle'; pick: number; actual: number }
  | { kind: 'cancel'; pick: number }
  | { kind: 'advance'; ms: number };

const key = fc.constantFrom('a', 'b');
const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constant('reserve' as const), key, estimate: fc.integer({ min: 0, max: 12 }) }),
  fc.record({ kind: fc.constant('settle' as const), pick: fc.nat(), actual: fc.integer({ min: 0, max: 25 }) }),
  fc.record({ kind: fc.constant('cancel' as const), pick: fc.nat() }),
  // Up to past the ttlMs, so some reservations expire before their settle.
  fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 900 }) }),
);

const pick = ({ allowed, remaining, retryAfterMs, resetAfterMs }: Decision) => ({
  allowed,
  remaining,
  retryAfterMs,
  resetAfterMs,
});

interface Open {
  key: string;
  reservation: Reservation;
  expiresAtMs: number;
  settled: boolean;
}

/**
 * Replays `steps` on `limiter` (whose clock is `clock`) and on the GCRA reference model: every
 * reserve decides as the model's `decide`, a settle moves the model by its refund or charge, an
 * expired reservation rejects and moves nothing, and after each step both hold the same state for every key.
 */
async function replay(limiter: Limiter, steps: readonly Step[], clock: { nowMs: number }, prefix: string) {
  const model = gcraReference(LIMIT, PERIOD_MS);
  const open: Open[] = [];
  const settle = async (target: Open, actual: number) => {
    const { reservation } = target;
    const settled = target.reservation.settle(actual);
    if (clock.nowMs >= target.expiresAtMs) {
      const error = await settled.catch((caught: unknown) => caught);
      expect(isSluiceError(error, 'ERR_SLUICE_RESERVATION')).toBe(true);
    } else {
      await settled;
      if (actual < reservation.estimate) model.refund?.(target.key, clock.nowMs, reservation.estimate - actual);
      if (actual > reservation.estimate) model.charge?.(target.key, clock.nowMs, actual - reservation.estimate);
    }
    target.settled = true;
  };
  for (const current of steps) {
    if (current.kind === 'advance') clock.nowMs += current.ms;
    if (current.kind === 'reserve') {
      const answer = await reserve(limiter, prefix + current.key, current.estimate, {
        ttlMs: TTL_MS,
        clock: () => clock.nowMs,
      });
      expect(pick(answer.decision)).toEqual(pick(model.decide(current.key, clock.nowMs, current.estimate)));
      if (answer.allowed) {
        open.push({
          key: current.key,
          reservation: answer.reservation,
          expiresAtMs: clock.nowMs + TTL_MS,
          settled: false,
        });
      }
    }
    const unsettled = open.filter((candidate) => !candidate.settled);
    if (current.kind === 'settle' && unsettled.length > 0) {
      await settle(unsettled[current.pick % unsettled.length] as Open, current.actual);
    }
    if (current.kind === 'cancel' && unsettled.length > 0) {
      await settle(unsettled[current.pick % unsettled.length] as Open, 0);
    }
    // The state of each key (peek answers for a request of cost 1, decide(0) for none).
    for (const each of ['a', 'b']) {
      const { remaining, resetAfterMs } = await limiter.peek(prefix + each);
      const expected = model.decide(each, clock.nowMs, 0);
      expect({ remaining, resetAfterMs }).toEqual({
        remaining: expected.remaining,
        resetAfterMs: expected.resetAfterMs,
      });
    }
  }
}

describe('reservations decide exactly as the GCRA reference model with refund and charge', () => {
  it('memory: random reserve/settle/cancel/expire schedules', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 40 }), async (steps) => {
        const clock = { nowMs: 1_000_000 };
        const limiter = createMemoryLimiter({
          algorithm: gcra({ limit: LIMIT, periodMs: PERIOD_MS }),
          clock: () => clock.nowMs,
          pruneIntervalMs: 0,
        });
        await replay(limiter, steps, clock, '');
      }),
      { numRuns: 150 },
    );
  });

  it('real redis-server: random reserve/settle/cancel/expire schedules', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 25 }), async (steps) => {
        const clock = { nowMs: 1_700_000_000_000 };
        const limiter = createRedisLimiter({
          client: redis.redis(0),
          algorithm: gcra({ limit: LIMIT, periodMs: PERIOD_MS }),
          clock: () => clock.nowMs,
          prefix: 'reservation-reference:',
        });
        await replay(limiter, steps, clock, `run-${++run}:`);
      }),
      { numRuns: 40 },
    );
  });
});

import fc from 'fast-check';
import type { Decision, Limiter } from '../../src/index.js';
import { type ManualClock, manualClock } from '../../src/testing/index.js';

/** One request of a schedule: which key, what cost, peek or limit, and time passing before it. */
export interface ScheduledRequest {
  key: string;
  cost: number;
  peek: boolean;
  advanceMs: number;
}

/**
 * Requests on `keys`: costs 0..7 (or what `cost` draws), one in ten a peek, mostly in the same ms
 * (one call), sometimes a tick later (a new call).
 */
export function scheduledRequest(
  keys: readonly string[],
  cost: fc.Arbitrary<number> = fc.integer({ min: 0, max: 7 }),
): fc.Arbitrary<ScheduledRequest> {
  return fc.record({
    key: fc.constantFrom(...keys),
    cost,
    peek: fc.integer({ min: 0, max: 9 }).map((n) => n === 0),
    advanceMs: fc.oneof(
      { weight: 8, arbitrary: fc.constant(0) },
      { weight: 2, arbitrary: fc.integer({ min: 1, max: 3000 }) },
    ),
  });
}

const ask = (limiter: Limiter, { key, cost, peek }: ScheduledRequest): Promise<Decision> =>
  peek ? limiter.peek(key) : limiter.limit(key, { cost });

/**
 * Decides `turns` twice from one start time: first one awaited call per request on the limiter
 * `plain` builds, then each turn's requests all asked before any reply (so they reach the
 * batcher in one event-loop turn) on the limiter `batched` builds, which is closed at the end.
 * Returns both lists of decisions, to be equal.
 */
export async function decideTurns(
  turns: readonly (readonly ScheduledRequest[])[],
  plain: (clock: ManualClock) => Limiter,
  batched: (clock: ManualClock) => Limiter,
): Promise<{ expected: Decision[]; actual: Decision[] }> {
  const clock = manualClock();
  const start = clock.now();
  const one = plain(clock);
  const expected: Decision[] = [];
  for (const turn of turns) {
    for (const request of turn) {
      clock.advance(request.advanceMs);
      expected.push(await ask(one, request));
    }
    clock.advance(500);
  }
  const replay = manualClock(start);
  const many = batched(replay);
  const actual: Decision[] = [];
  for (const turn of turns) {
    const pending = turn.map((request) => {
      replay.advance(request.advanceMs);
      return ask(many, request);
    });
    actual.push(...(await Promise.all(pending)));
    replay.advance(500);
  }
  await many.close();
  return { expected, actual };
}

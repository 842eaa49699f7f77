import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError, createLeasedLimiter, createMemoryLimiter, gcra, type Limiter } from '../../src/index.js';
import { withFailurePolicy } from '../../src/policy/index.js';
import { createHeartbeat, type Heartbeat } from '../../src/stores/redis/index.js';
import { useRedisServer } from '../support/redis-server.js';

/*
 * Node runs a timer delay above 2^31 − 1 ms after 1 ms (with a TimeoutOverflowWarning): before
 * the fix, `deadlineMs: 2 ** 31` timed every decision out at once and a heartbeat of
 * `intervalMs: 2 ** 31` beat every millisecond. Every option that becomes a timer delay now
 * refuses such values with a ConfigError naming it (issue 12 item 4).
 */

const { redis } = useRedisServer();
const TOO_LONG = 2 ** 31;
const LONGEST = 2 ** 31 - 1;

const algorithm = gcra({ limit: 10, periodMs: 1000 });
const memory = (pruneIntervalMs = 0) => createMemoryLimiter({ algorithm, pruneIntervalMs });

let overflows: string[] = [];
const onWarning = (warning: Error) => {
  if (warning.name === 'TimeoutOverflowWarning') overflows.push(warning.message);
};
const open: { close(): Promise<void> }[] = [];
beforeEach(() => {
  overflows = [];
  process.on('warning', onWarning);
});
afterEach(async () => {
  process.off('warning', onWarning);
  await Promise.all(open.splice(0).map((o) => o.close()));
});

/** Lets Node report a clamped timer (it warns on the next tick). */
const settle = () => new Promise((resolve) => setTimeout(resolve, 20));

function expectRefused(build: () => unknown, option: string): void {
  let thrown: unknown;
  try {
    open.push(build() as Limiter);
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(ConfigError);
  expect((thrown as Error).message).toContain(`${option} must be an integer in`);
  expect((thrown as Error).message).toContain(`..${LONGEST}`);
}

const cases: [string, (ms: number) => { close(): Promise<void> }][] = [
  ['deadlineMs', (ms) => withFailurePolicy(memory(), { deadlineMs: ms })],
  ['breaker.coolDownMs', (ms) => withFailurePolicy(memory(), { breaker: { coolDownMs: ms } })],
  ['pruneIntervalMs', (ms) => memory(ms)],
  [
    'returnCheckIntervalMs',
    (ms) => createLeasedLimiter({ remote: memory(), leaseSize: 2, returnIdleMs: 1000, returnCheckIntervalMs: ms }),
  ],
  ['intervalMs', (ms): Heartbeat => createHeartbeat({ client: redis(), name: 'durations', intervalMs: ms })],
];

describe('durations above 2^31 − 1 ms are refused, not clamped to 1 ms (issue 12 item 4)', () => {
  for (const [option, build] of cases) {
    it(`${option}: 2^31 is a ConfigError naming it; 2^31 − 1 is kept without a timer overflow`, async () => {
      expectRefused(() => build(TOO_LONG), option);
      open.push(build(LONGEST));
      await settle();
      expect(overflows).toEqual([]);
    });
  }

  it('returnIdleMs may exceed 2^31 − 1 (it is compared with the clock); the default check period is capped', async () => {
    open.push(createLeasedLimiter({ remote: memory(), leaseSize: 2, returnIdleMs: 2 ** 40 }));
    await settle();
    expect(overflows).toEqual([]);
  });
});

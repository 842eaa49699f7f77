import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  ConfigError,
  createLeasedLimiter,
  createMemoryLimiter,
  fixedWindow,
  gcra,
  InvalidKeyError,
  slidingWindowLog,
} from '../../src/index.js';
import {
  AcquirerClosedError,
  AcquireTimeoutError,
  CostOverLimitError,
  createAcquirer,
  createMemoryPauseStore,
  QueueFullError,
  throttle,
} from '../../src/outbound/index.js';
import { withFailurePolicy } from '../../src/policy/index.js';
import { counting, liveTimers, maxInWindow } from './support/counting.js';

const settle = <T>(promise: Promise<T>) =>
  promise.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );

describe('acquire', () => {
  it('admits waiters first in, first out, with one limiter call per admission or wake-up', async () => {
    const counted = counting(createMemoryLimiter({ algorithm: gcra({ limit: 50, periodMs: 1000, burst: 2 }) }));
    const acquirer = createAcquirer(counted.limiter, { jitterMs: 0 });
    const order: number[] = [];
    await Promise.all(Array.from({ length: 8 }, (_, i) => acquirer.acquire('k').then(() => order.push(i))));
    expect(order).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    // 8 admissions; each of the 7 wake-ups ends with a denial or two (a timer may fire before the
    // millisecond clock reaches its slot), whatever the number of waiters: one call per waiter per
    // wake-up would be 8 + 7 + 6 + … = 36.
    expect(counted.calls).toBeLessThanOrEqual(8 + 2 * 7);
    expect(counted.charged).toBe(8);
    expect(acquirer.waiting('k')).toBe(0);
  });

  it('waits on a leased limiter and on a policy-wrapped one as on the store itself', async () => {
    const algorithm = gcra({ limit: 100, periodMs: 1000, burst: 4 });
    const leased = createLeasedLimiter({ remote: createMemoryLimiter({ algorithm }), leaseSize: 2 });
    const wrapped = withFailurePolicy(createMemoryLimiter({ algorithm }), { failure: 'closed' });
    for (const limiter of [leased, wrapped]) {
      const acquirer = createAcquirer(limiter, { jitterMs: 0 });
      const order: number[] = [];
      const decisions = await Promise.all(
        Array.from({ length: 12 }, async (_, i) => {
          const decision = await acquirer.acquire('k');
          order.push(i);
          return decision;
        }),
      );
      expect(order).toEqual(Array.from({ length: 12 }, (_, i) => i));
      expect(decisions.every((decision) => decision.allowed && decision.degraded === undefined)).toBe(true);
      acquirer.close();
      await limiter.close();
    }
  });

  it('rejects at once, charging nothing, when maxWaitMs is shorter than the announced wait', async () => {
    const counted = counting(
      createMemoryLimiter({ algorithm: gcra({ limit: 1, periodMs: 60_000 }), pruneIntervalMs: 0 }),
    );
    const acquirer = createAcquirer(counted.limiter);
    await acquirer.acquire('k');
    const timers = liveTimers();
    const outcome = await settle(acquirer.acquire('k', { maxWaitMs: 5_000 }));
    const error = (outcome as { error: AcquireTimeoutError }).error;
    expect(error).toBeInstanceOf(AcquireTimeoutError);
    expect(error.code).toBe('ERR_SLUICE_ACQUIRE_TIMEOUT');
    expect(error.retryAfterMs).toBeGreaterThan(50_000);
    // While a waiter holds the queue, a later one is refused from the known wait, without a call.
    const head = settle(acquirer.acquire('k'));
    await new Promise((resolve) => setTimeout(resolve, 5));
    const calls = counted.calls;
    await expect(acquirer.acquire('k', { maxWaitMs: 1000 })).rejects.toBeInstanceOf(AcquireTimeoutError);
    expect(counted.calls).toBe(calls);
    acquirer.close();
    await head;
    expect(counted.charged).toBe(1);
    expect(liveTimers()).toBeLessThanOrEqual(timers);
  });

  it('rejects a cost that can never be admitted at once, and a full queue with QueueFullError', async () => {
    const counted = counting(createMemoryLimiter({ algorithm: gcra({ limit: 5, periodMs: 1000 }) }));
    const acquirer = createAcquirer(counted.limiter, { maxQueueLength: 2 });
    await expect(acquirer.acquire('k', { cost: 6 })).rejects.toBeInstanceOf(CostOverLimitError);
    expect(counted.calls).toBe(0);
    await acquirer.acquire('k', { cost: 5 });
    const first = settle(acquirer.acquire('k'));
    const second = settle(acquirer.acquire('k'));
    const full = await settle(acquirer.acquire('k'));
    expect((full as { error: QueueFullError }).error).toBeInstanceOf(QueueFullError);
    expect((full as { error: QueueFullError }).error.code).toBe('ERR_SLUICE_QUEUE_FULL');
    expect((await first).ok && (await second).ok).toBe(true);
  });

  it('rejects with signal.reason (an AbortError DOMException) and charges nothing when aborted', async () => {
    const counted = counting(createMemoryLimiter({ algorithm: gcra({ limit: 1, periodMs: 60_000 }) }));
    const acquirer = createAcquirer(counted.limiter);
    await acquirer.acquire('k');
    const controller = new AbortController();
    const waiting = settle(acquirer.acquire('k', { signal: controller.signal }));
    await new Promise((resolve) => setTimeout(resolve, 5));
    controller.abort();
    const outcome = (await waiting) as { error: DOMException };
    expect(outcome.error).toBe(controller.signal.reason);
    expect(outcome.error.name).toBe('AbortError');
    expect(outcome.error).toBeInstanceOf(DOMException);
    await expect(acquirer.acquire('k', { signal: AbortSignal.abort() })).rejects.toMatchObject({ name: 'AbortError' });
    expect(counted.charged).toBe(1);
    expect(acquirer.waiting('k')).toBe(0);
  });

  it('never lets a waiting key delay another key', async () => {
    const acquirer = createAcquirer(createMemoryLimiter({ algorithm: gcra({ limit: 1, periodMs: 60_000 }) }));
    await acquirer.acquire('slow');
    const stuck = settle(acquirer.acquire('slow'));
    const other = await acquirer.acquire('fast');
    expect(other.allowed).toBe(true);
    expect(acquirer.waiting('slow')).toBe(1);
    acquirer.close();
    expect((await stuck) as { error: unknown }).toMatchObject({ error: expect.any(AcquirerClosedError) });
  });

  it('leaves no timer, no queue entry and no charged unit after 1,000 waiters aborted at random', async () => {
    // Sliding log, 100 per minute: every unit charged stays in the log, so peek counts them all.
    const counted = counting(
      createMemoryLimiter({ algorithm: slidingWindowLog({ limit: 100, windowMs: 60_000 }), pruneIntervalMs: 0 }),
    );
    const acquirer = createAcquirer(counted.limiter, { maxQueueLength: 1000 });
    const timers = liveTimers();
    const controllers = Array.from({ length: 1000 }, () => new AbortController());
    const outcomes = controllers.map((controller, i) =>
      settle(acquirer.acquire('k', { signal: controller.signal, cost: 1 + (i % 3), maxWaitMs: 120_000 })),
    );
    const aborts = controllers.map((controller) => setTimeout(() => controller.abort(), Math.random() * 200));
    const results = await Promise.all(outcomes);
    for (const timer of aborts) clearTimeout(timer);
    const admittedUnits = results.reduce((sum, r, i) => sum + (r.ok ? 1 + (i % 3) : 0), 0);
    // A call in flight when the last waiter left lands after it: read once every call is answered.
    for (let tries = 0; tries < 1000 && counted.pending > 0; tries++) await new Promise((r) => setTimeout(r, 10));
    expect(results.filter((r) => !r.ok).every((r) => (r as { error: Error }).error.name === 'AbortError')).toBe(true);
    expect(acquirer.waiting('k')).toBe(0);
    expect(liveTimers()).toBeLessThanOrEqual(timers);
    expect(counted.charged).toBe(admittedUnits);
    expect((await counted.limiter.peek('k')).remaining).toBe(100 - admittedUnits);
  });

  it('paces: units are released one emission interval apart, though the burst admits them at once', async () => {
    const counted = counting(createMemoryLimiter({ algorithm: gcra({ limit: 50, periodMs: 1000, burst: 20 }) }));
    const acquirer = createAcquirer(counted.limiter, { pace: true });
    const released: number[] = [];
    await Promise.all(
      Array.from({ length: 40 }, () => acquirer.acquire('k').then(() => released.push(performance.now()))),
    );
    // 50/s: 10 per 200 ms window (the burst alone let 20 through at once).
    expect(maxInWindow(released, 200)).toBeLessThanOrEqual(10);
    expect(counted.charged).toBe(40);
    expect(() =>
      createAcquirer(createMemoryLimiter({ algorithm: fixedWindow({ limit: 1, windowMs: 1 }) }), { pace: true }),
    ).toThrow(/pace needs a GCRA limiter/);
  });

  it('paces with one limiter call per batch of slots, not one per waiter', async () => {
    // Burst 20: a wake-up books 10 consecutive slots with one call of cost 10.
    const counted = counting(createMemoryLimiter({ algorithm: gcra({ limit: 100, periodMs: 1000, burst: 20 }) }));
    const acquirer = createAcquirer(counted.limiter, { pace: true });
    const released: number[] = [];
    await Promise.all(
      Array.from({ length: 60 }, () => acquirer.acquire('k').then(() => released.push(performance.now()))),
    );
    expect(counted.charged).toBe(60);
    // 6 batches, each wake-up at most one denial: far under one call per waiter.
    expect(counted.calls).toBeLessThanOrEqual(12);
    expect(maxInWindow(released, 100)).toBeLessThanOrEqual(10);
  });

  it('paces with maxLatenessMs shorter than the store’s reply: slots are kept, not all given up', async () => {
    // Each decision comes back 100 ms later by the acquirer's clock (a jump of the clock it is
    // given, so the delay is exact however loaded the machine), twice the lateness allowed.
    // Timed from the reply, every slot of every batch would already be late and be booked again,
    // for ever: no waiter would ever be admitted. Timed from the call's start, slots booked at
    // least the bound ahead are kept. A timer firing more than 50 ms late (a loaded machine)
    // rightly gives its slot up and books again, so calls are not counted: every waiter getting
    // through is the property.
    const counted = counting(createMemoryLimiter({ algorithm: gcra({ limit: 100, periodMs: 1000, burst: 20 }) }));
    const inner = counted.limiter;
    let replyDelaysMs = 0;
    const slow = {
      ...inner,
      async limit(key: string, options?: { cost?: number }) {
        const decision = await inner.limit(key, options);
        replyDelaysMs += 100;
        return decision;
      },
    };
    const clock = () => performance.now() + replyDelaysMs;
    const acquirer = createAcquirer(slow, { pace: true, maxLatenessMs: 50, clock });
    const outcomes = await Promise.allSettled(
      Array.from({ length: 30 }, () => acquirer.acquire('k', { maxWaitMs: 60_000 })),
    );
    expect(outcomes.filter((outcome) => outcome.status === 'rejected')).toEqual([]);
    expect(counted.charged).toBeGreaterThanOrEqual(30);
    acquirer.close();
  }, 90_000);

  it('refuses to pace a leased limiter with a ConfigError: its decisions come from a local lease', () => {
    const remote = createMemoryLimiter({ algorithm: gcra({ limit: 50, periodMs: 1000, burst: 20 }) });
    const leased = createLeasedLimiter({ remote, leaseSize: 10 });
    const attempt = () => createAcquirer(leased, { pace: true });
    expect(attempt).toThrow(ConfigError);
    expect(attempt).toThrow(/leased limiter/);
    // Not paced, a leased limiter waits like any other; paced, its remote is what gets paced.
    expect(createAcquirer(leased).limiter).toBe(leased);
    expect(createAcquirer(remote, { pace: true }).limiter).toBe(remote);
  });
});

describe('pause and scale', () => {
  it('a wait past maxWaitMs during a pause rejects with whole milliseconds, as a Decision has', async () => {
    const acquirer = createAcquirer(createMemoryLimiter({ algorithm: gcra({ limit: 10, periodMs: 1000 }) }));
    acquirer.pause('api', 2000);
    await new Promise((resolve) => setTimeout(resolve, 3)); // the pause's end is now a fraction away
    const error = await acquirer.acquire('api', { maxWaitMs: 500 }).catch((rejected: unknown) => rejected);
    expect(error).toBeInstanceOf(AcquireTimeoutError);
    const { retryAfterMs } = error as AcquireTimeoutError;
    expect(Number.isInteger(retryAfterMs)).toBe(true);
    expect(retryAfterMs).toBeGreaterThan(1900);
    expect(retryAfterMs).toBeLessThanOrEqual(2000);
    acquirer.close();
  });

  it('pauses a key for every acquirer sharing the pause store', async () => {
    const shared = createMemoryLimiter({ algorithm: gcra({ limit: 20, periodMs: 1000, burst: 5 }) });
    const pauses = createMemoryPauseStore();
    const a = createAcquirer(shared, { pauses });
    const b = createAcquirer(shared, { pauses });
    await a.acquire('api');
    const pausedAtMs = performance.now();
    a.pause('api', 300);
    const decision = await b.acquire('api');
    expect(decision.allowed).toBe(true);
    // b waited for the whole pause although the limiter held units (a lower bound: load only adds).
    expect(performance.now() - pausedAtMs).toBeGreaterThanOrEqual(299);
    a.close();
    b.close();
  });

  it('a pause store called directly rejects bad keys with InvalidKeyError, as the acquirer does', async () => {
    const pauses = createMemoryPauseStore();
    for (const key of ['', 'x'.repeat(513), '\ud800', 42, undefined] as unknown as string[]) {
      await expect(pauses.pause(key, 1000)).rejects.toBeInstanceOf(InvalidKeyError);
      await expect(pauses.pausedForMs(key)).rejects.toBeInstanceOf(InvalidKeyError);
    }
  });

  it('charges the learned factor per unit; a later one replaces it', async () => {
    const counted = counting(createMemoryLimiter({ algorithm: gcra({ limit: 10, periodMs: 1000 }) }));
    const acquirer = createAcquirer(counted.limiter);
    acquirer.scale('api', 2);
    await acquirer.acquire('api');
    expect(counted.charged).toBe(2);
    acquirer.scale('api', 1);
    await acquirer.acquire('api');
    expect(counted.charged).toBe(3);
  });
});

describe('throttle', () => {
  it('keeps the wrapped function signature and acquires before each call', async () => {
    const counted = counting(createMemoryLimiter({ algorithm: gcra({ limit: 10, periodMs: 1000 }) }));
    const add = async (a: number, b: string) => `${a}${b}`;
    const throttled = throttle(add, { limiter: counted.limiter, key: 'k', cost: (a) => a });
    expectTypeOf(throttled).toEqualTypeOf<(a: number, b: string) => Promise<string>>();
    expect(await throttled(3, 'x')).toBe('3x');
    expect(counted.charged).toBe(3);
  });
});

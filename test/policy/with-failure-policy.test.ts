import { describe, expect, it } from 'vitest';
import { fixedWindow } from '../../src/algorithms/fixed-window.js';
import { gcra } from '../../src/algorithms/gcra.js';
import type { Algorithm } from '../../src/algorithms/types.js';
import { ConfigError, InvalidCostError, InvalidKeyError, StoreUnavailableError } from '../../src/errors.js';
import { createLeasedLimiter } from '../../src/lease/leased-limiter.js';
import {
  type DegradedEvent,
  type FailurePolicyOptions,
  type ShadowDenyEvent,
  withFailurePolicy,
} from '../../src/policy/index.js';
import { createMemoryLimiter, type MemoryLimiter } from '../../src/stores/memory/memory-limiter.js';
import { manualClock, runConformance } from '../../src/testing/index.js';
import type { SluiceWarning } from '../../src/warnings.js';
import { faultyLimiter } from './support/faulty-limiter.js';

const HOUR = 3_600_000;

function setup(options: FailurePolicyOptions = {}, algorithm = gcra({ limit: 2, periodMs: 10_000 })) {
  const clock = manualClock();
  const memory = createMemoryLimiter({ algorithm, clock: clock.now, pruneIntervalMs: 0 });
  const store = faultyLimiter(memory);
  const events: DegradedEvent[] = [];
  const limiter = withFailurePolicy(store.limiter, {
    clock: clock.now,
    deadlineMs: 10,
    breaker: { failureThreshold: 3, coolDownMs: 1000 },
    onDegraded: (event) => events.push(event),
    ...options,
  });
  return { clock, memory, store, limiter, events };
}

/** A real GCRA core that counts how often it is asked. */
function counting(algorithm: Algorithm): Algorithm & { asked: number } {
  const wrapped = {
    ...algorithm,
    asked: 0,
    decide(state: Float64Array, offset: number, nowMs: number, cost: number, commit: boolean) {
      wrapped.asked++;
      return algorithm.decide(state, offset, nowMs, cost, commit);
    },
  };
  return wrapped;
}

describe('withFailurePolicy: a healthy store', () => {
  it('returns the store’s own decisions, unmarked', async () => {
    const { limiter, store } = setup();
    const first = await limiter.limit('k');
    expect(first).toEqual({ allowed: true, limit: 2, remaining: 1, retryAfterMs: 0, resetAfterMs: 5000 });
    expect('degraded' in first).toBe(false);
    await limiter.limit('k');
    const denied = await limiter.limit('k');
    expect(denied).toEqual({ allowed: false, limit: 2, remaining: 0, retryAfterMs: 5000, resetAfterMs: 10_000 });
    expect(store.calls).toBe(3);
    expect(limiter.stats()).toMatchObject({ decisions: 3, storeCalls: 3, degradedAllowed: 0, degradedDenied: 0 });
  });

  it('regression: a cost-3 request against limit 2 is denied by the primary; a fallback allowing 100 is not asked', async () => {
    const local = counting(gcra({ limit: 100, periodMs: HOUR }));
    const { limiter, events } = setup({ fallback: { instances: 1, algorithm: () => local } });
    const decision = await limiter.limit('k', { cost: 3 });
    expect(decision).toEqual({
      allowed: false,
      limit: 2,
      remaining: 2,
      retryAfterMs: Number.POSITIVE_INFINITY,
      resetAfterMs: 0,
    });
    await limiter.limit('k', { cost: 2 });
    const exhausted = await limiter.limit('k');
    expect(exhausted.allowed).toBe(false);
    expect(exhausted.retryAfterMs).toBe(5000);
    expect(local.asked).toBe(0);
    expect(events).toEqual([]);
    expect(limiter.stats()).toMatchObject({ degradedAllowed: 0, degradedDenied: 0 });
  });
});

describe('withFailurePolicy: a failing store', () => {
  it('fail open admits, marked degraded with the reason, and tells onDegraded', async () => {
    const { limiter, store, events } = setup({ failure: 'open' });
    store.fault = 'refuse';
    const decision = await limiter.limit('k', { cost: 1 });
    expect(decision).toEqual({
      allowed: true,
      limit: 2,
      remaining: 1,
      retryAfterMs: 0,
      resetAfterMs: 0,
      degraded: true,
      degradedReason: 'connection',
      failure: 'open',
    });
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ reason: 'connection', failure: 'open', key: 'k', cost: 1, allowed: true });
    expect(events[0]?.error).toBeInstanceOf(StoreUnavailableError);
    expect(limiter.stats()).toMatchObject({ degradedAllowed: 1, connectionErrors: 1 });
  });

  it('fail closed denies with retryAfterMs = the breaker’s remaining cool-down', async () => {
    const { limiter, store, clock } = setup({ failure: 'closed' });
    store.fault = 'refuse';
    const first = await limiter.limit('k');
    expect(first).toMatchObject({
      allowed: false,
      remaining: 0,
      retryAfterMs: 1000,
      degraded: true,
      failure: 'closed',
    });
    await limiter.limit('k');
    await limiter.limit('k'); // the third consecutive failure opens the breaker
    expect(limiter.stats()).toMatchObject({ breaker: 'open', breakerOpens: 1 });
    clock.advance(300);
    const whileOpen = await limiter.limit('k');
    expect(whileOpen).toMatchObject({ allowed: false, retryAfterMs: 700, degradedReason: 'breaker-open' });
    expect(store.calls).toBe(3);
    const never = await limiter.limit('k', { cost: 3 });
    expect(never.retryAfterMs).toBe(Number.POSITIVE_INFINITY);
  });

  it('breaker: no call reaches the store while open; one probe after the cool-down; its success restores exact decisions', async () => {
    const { limiter, store, clock } = setup({ failure: 'open' });
    store.fault = 'refuse';
    for (let i = 0; i < 10; i++) await limiter.limit(`k${i}`);
    expect(store.calls).toBe(3);
    expect(limiter.stats()).toMatchObject({ breakerRejections: 7, connectionErrors: 3 });
    store.fault = 'hang';
    clock.advance(1000);
    const probe = limiter.limit('k');
    const others = await Promise.all([limiter.limit('k'), limiter.limit('k')]);
    expect(others.map((d) => d.degradedReason)).toEqual(['breaker-open', 'breaker-open']);
    expect(store.calls).toBe(4);
    expect(await probe).toMatchObject({ degraded: true, degradedReason: 'timeout' });
    store.fault = 'none';
    await store.release();
    expect(limiter.stats()).toMatchObject({ breaker: 'open', breakerOpens: 2, lateReplies: 1 });
    clock.advance(1000);
    const recovered = await limiter.limit('fresh');
    expect(recovered).toEqual({ allowed: true, limit: 2, remaining: 1, retryAfterMs: 0, resetAfterMs: 5000 });
    expect(limiter.stats().breaker).toBe('closed');
    expect(store.calls).toBe(5);
  });

  it('deadline: a hung store answers by policy; the late reply is discarded, never decided twice', async () => {
    const { limiter, store, memory } = setup({ failure: 'closed' });
    store.fault = 'hang';
    const decision = await limiter.limit('k', { cost: 2 });
    expect(decision).toMatchObject({ allowed: false, degraded: true, degradedReason: 'timeout', failure: 'closed' });
    store.fault = 'none';
    await store.release();
    // The store applied the late request (the unit was charged remotely) …
    expect(memory.peekSync('k').remaining).toBe(0);
    // … but the caller got one answer, counted once.
    expect(decision.allowed).toBe(false);
    expect(limiter.stats()).toMatchObject({ decisions: 1, timeouts: 1, lateReplies: 1, degradedDenied: 1 });
  });

  it('a script error follows the policy, marked script-error, with an integer remaining in range', async () => {
    const { limiter, store } = setup({ failure: 'open' });
    store.fault = 'script';
    const decision = await limiter.limit('k', { cost: 5 });
    expect(decision).toMatchObject({ allowed: true, remaining: 0, degradedReason: 'script-error' });
    expect(limiter.stats().scriptErrors).toBe(1);
  });

  it('per-call failure overrides the limiter’s policy (a login route fails closed)', async () => {
    const { limiter, store } = setup({
      failure: 'open',
      fallback: { instances: 2 },
      breaker: { failureThreshold: 99 },
    });
    store.fault = 'refuse';
    expect((await limiter.limit('k')).allowed).toBe(true);
    expect(await limiter.limit('login', { failure: 'closed' })).toMatchObject({ allowed: false, failure: 'closed' });
    expect(await limiter.limit('k', { failure: 'fallback' })).toMatchObject({
      allowed: true,
      limit: 1,
      failure: 'fallback',
    });
    expect(await limiter.limit('k', { failure: 'fallback' })).toMatchObject({ allowed: false, failure: 'fallback' });
  });

  it('invalid calls reject with typed errors and never touch the store or the breaker', async () => {
    const { limiter, store } = setup({ failure: 'open' });
    await expect(limiter.limit('')).rejects.toBeInstanceOf(InvalidKeyError);
    await expect(limiter.limit('k', { cost: -1 })).rejects.toBeInstanceOf(InvalidCostError);
    await expect(limiter.limit('k', { cost: 1.5 })).rejects.toBeInstanceOf(InvalidCostError);
    await expect(limiter.limit('k', { failure: 'sideways' as never })).rejects.toBeInstanceOf(ConfigError);
    await expect(limiter.limit('k', { failure: 'fallback' })).rejects.toThrow(/needs the fallback option/);
    expect(store.calls).toBe(0);
    expect(limiter.stats()).toMatchObject({ decisions: 0, breaker: 'closed' });
  });

  it('an error that is not a store failure rejects as is and does not open the breaker', async () => {
    const { limiter, store } = setup({ failure: 'open' });
    store.fault = 'bug';
    for (let i = 0; i < 5; i++) await expect(limiter.limit('k')).rejects.toBeInstanceOf(TypeError);
    expect(limiter.stats()).toMatchObject({ breaker: 'closed', degradedAllowed: 0 });
  });

  it('a throwing onDegraded cannot change the decision', async () => {
    const { limiter, store } = setup({
      failure: 'open',
      onDegraded: () => {
        throw new Error('logging is broken');
      },
    });
    store.fault = 'refuse';
    expect((await limiter.limit('k')).allowed).toBe(true);
  });

  it('without onDegraded, the first degradation emits one SLUICE_DEGRADED warning; onWarning: false silences it', async () => {
    const warnings: Error[] = [];
    const listener = (warning: Error) => warnings.push(warning);
    process.on('warning', listener);
    try {
      const loud = setup({ failure: 'open', onDegraded: undefined });
      const quiet = setup({ failure: 'open', onDegraded: undefined, onWarning: false });
      loud.store.fault = 'refuse';
      quiet.store.fault = 'refuse';
      for (let i = 0; i < 5; i++) {
        await loud.limiter.limit('k');
        await quiet.limiter.limit('k');
      }
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.filter((w) => (w as Error & { code?: string }).code === 'SLUICE_DEGRADED')).toHaveLength(1);
    } finally {
      process.off('warning', listener);
    }
  });

  it('the SLUICE_DEGRADED warning goes once to an onWarning sink, with its docs/errors.md entry', async () => {
    const seen: SluiceWarning[] = [];
    const { limiter, store } = setup({ failure: 'open', onDegraded: undefined, onWarning: (w) => seen.push(w) });
    store.fault = 'refuse';
    for (let i = 0; i < 3; i++) await limiter.limit('k');
    expect(seen).toHaveLength(1);
    expect(seen[0]?.code).toBe('SLUICE_DEGRADED');
    expect(seen[0]?.message).toMatch(/degraded to 'open'.*\(see docs\/errors\.md#sluice_degraded\)$/);
  });
});

describe('withFailurePolicy: local fallback', () => {
  it('limit 90 per hour, 3 instances: this instance admits 30 during the outage, then denies with a finite retry', async () => {
    const { limiter, store, events } = setup({ fallback: { instances: 3 } }, gcra({ limit: 90, periodMs: HOUR }));
    store.fault = 'refuse';
    const decisions = [];
    for (let i = 0; i < 40; i++) decisions.push(await limiter.limit('k'));
    expect(decisions.filter((d) => d.allowed)).toHaveLength(30);
    expect(decisions.every((d) => d.degraded && d.failure === 'fallback' && d.limit === 30)).toBe(true);
    expect(decisions[39]?.retryAfterMs).toBe(120_000);
    expect(events.every((e) => e.instances === 3)).toBe(true);
  });

  it('a cost above the local share but within the limit is denied with a finite retry (the store may be back)', async () => {
    const { limiter, store } = setup({ fallback: { instances: 3 } }, gcra({ limit: 90, periodMs: HOUR }));
    store.fault = 'refuse';
    expect(await limiter.limit('k', { cost: 40 })).toMatchObject({ allowed: false, retryAfterMs: 1000 });
    expect((await limiter.limit('k', { cost: 91 })).retryAfterMs).toBe(Number.POSITIVE_INFINITY);
  });

  it('follows a live instance count: N = 2 gives 45, then N = 3 starts a fresh share of 30', async () => {
    let live = 2;
    const { limiter, store } = setup(
      { fallback: { instances: { instances: () => live } }, breaker: { failureThreshold: 1000 } },
      gcra({ limit: 90, periodMs: HOUR }),
    );
    store.fault = 'refuse';
    let admitted = 0;
    for (let i = 0; i < 60; i++) if ((await limiter.limit('k')).allowed) admitted++;
    expect(admitted).toBe(45);
    live = 3;
    admitted = 0;
    for (let i = 0; i < 60; i++) if ((await limiter.limit('k')).allowed) admitted++;
    expect(admitted).toBe(30);
  });

  it('a degraded peek charges nothing, on either policy', async () => {
    const { limiter, store } = setup({ fallback: { instances: 1 } });
    store.fault = 'refuse';
    expect(await limiter.peek('k', { failure: 'open' })).toMatchObject({ allowed: true, remaining: 2, degraded: true });
    expect(await limiter.peek('k')).toMatchObject({ allowed: true, remaining: 2, failure: 'fallback' });
    expect(await limiter.peek('k', { failure: 'closed' })).toMatchObject({ allowed: false, remaining: 0 });
    expect((await limiter.limit('k')).remaining).toBe(1);
  });
});

describe('withFailurePolicy: shadow mode', () => {
  it('counts would-be denials and denies nothing; a would-be denial charges nothing', async () => {
    const shadowed: ShadowDenyEvent[] = [];
    const { limiter, memory } = setup({ shadow: true, onShadowDeny: (event) => shadowed.push(event) });
    const decisions = [await limiter.limit('k'), await limiter.limit('k'), await limiter.limit('k')];
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, true]);
    expect(decisions[2]).toMatchObject({ remaining: 0, retryAfterMs: 0 });
    expect(shadowed).toHaveLength(1);
    expect(shadowed[0]?.decision).toMatchObject({ allowed: false, retryAfterMs: 5000 });
    expect(limiter.stats().shadowDenied).toBe(1);
    expect(memory.peekSync('k').remaining).toBe(0);
    expect((await limiter.peek('k')).allowed).toBe(false);
  });

  it('a fail-closed degraded denial is admitted in shadow mode, still marked degraded', async () => {
    const { limiter, store } = setup({ shadow: true, failure: 'closed' });
    store.fault = 'refuse';
    expect(await limiter.limit('k')).toMatchObject({ allowed: true, degraded: true, failure: 'closed' });
    expect(limiter.stats()).toMatchObject({ shadowDenied: 1, degradedDenied: 1 });
  });
});

describe('withFailurePolicy over a leased limiter', () => {
  it('leases survive a blip: lease hits never touch the store, also while the breaker is open', async () => {
    const clock = manualClock();
    const memory = createMemoryLimiter({ algorithm: gcra({ limit: 100, periodMs: HOUR }), clock: clock.now });
    const store = faultyLimiter(memory);
    const leased = createLeasedLimiter({ remote: store.limiter, leaseSize: 10, clock: clock.now });
    const limiter = withFailurePolicy(leased, {
      failure: 'closed',
      deadlineMs: 10,
      breaker: { failureThreshold: 2, coolDownMs: 1000 },
      clock: clock.now,
      onWarning: false,
    });
    await limiter.limit('a');
    await limiter.limit('b'); // one lease of 10 each: 9 left each
    expect(store.calls).toBe(2);
    store.fault = 'refuse';
    for (let i = 0; i < 9; i++) {
      const hit = await limiter.limit('a');
      expect(hit.allowed && !hit.degraded).toBe(true);
    }
    expect(store.calls).toBe(2);
    expect(await limiter.limit('a')).toMatchObject({ allowed: false, degradedReason: 'connection' });
    expect(await limiter.limit('c')).toMatchObject({ allowed: false, degradedReason: 'connection' });
    expect(limiter.stats().breaker).toBe('open');
    const decisions = [];
    for (let i = 0; i < 9; i++) decisions.push(await limiter.limit('b'));
    expect(decisions.every((d) => d.allowed && !d.degraded)).toBe(true);
    expect(await limiter.limit('b')).toMatchObject({ allowed: false, degradedReason: 'breaker-open' });
    expect(store.calls).toBe(4);
    expect(limiter.stats()).toMatchObject({ localDecisions: 18, storeCalls: 4, breakerRejections: 1 });
  });

  it('offers the leased limiter’s synchronous tryLimit, with shadow mode applied', async () => {
    const clock = manualClock();
    const memory = createMemoryLimiter({ algorithm: gcra({ limit: 2, periodMs: HOUR }), clock: clock.now });
    const leased = createLeasedLimiter({ remote: memory, leaseSize: 2, clock: clock.now });
    const limiter = withFailurePolicy(leased, { shadow: true });
    expect(limiter.tryLimit?.('k')).toBeUndefined(); // nothing leased yet: needs the store
    await limiter.limit('k');
    expect(limiter.tryLimit?.('k')).toMatchObject({ allowed: true, remaining: 0 });
    await limiter.limit('k'); // refused by the remote: the refusal is cached
    expect(limiter.tryLimit?.('k')).toMatchObject({ allowed: true, retryAfterMs: 0 });
    expect(limiter.stats().shadowDenied).toBe(2);
    expect(withFailurePolicy(memory).tryLimit).toBeUndefined();
  });
});

describe('withFailurePolicy: refund', () => {
  it('passes refunds to the store under the breaker; rejects when the store cannot take them', async () => {
    const { limiter, store, memory } = setup({ failure: 'open' });
    await limiter.limit('k', { cost: 2 });
    await limiter.refund?.('k', 1);
    expect(memory.peekSync('k').remaining).toBe(1);
    store.fault = 'refuse';
    await expect(limiter.refund?.('k', 1)).rejects.toBeInstanceOf(StoreUnavailableError);
    const windows = createMemoryLimiter({ algorithm: fixedWindow({ limit: 2, windowMs: 1000 }) });
    expect(withFailurePolicy(windows).refund).toBeUndefined();
  });
});

describe('withFailurePolicy: reset, close and configuration', () => {
  it('reset reaches the store and the local share; with the breaker open it rejects without asking', async () => {
    const { limiter, store, memory } = setup({ fallback: { instances: 1 } });
    await limiter.limit('k');
    await limiter.reset('k');
    expect(memory.peekSync('k').remaining).toBe(2);
    store.fault = 'refuse';
    await limiter.limit('k');
    await limiter.limit('k');
    expect((await limiter.limit('k')).allowed).toBe(false); // the local share is spent
    await expect(limiter.reset('k')).rejects.toBeInstanceOf(StoreUnavailableError);
    expect(limiter.stats().breaker).toBe('open');
    const calls = store.calls;
    await expect(limiter.reset('k')).rejects.toThrow(/circuit breaker open/);
    expect(store.calls).toBe(calls);
    expect((await limiter.limit('k')).allowed).toBe(true); // the local share was reset
  });

  it('close closes the wrapped limiter', async () => {
    let closed = 0;
    const inner = createMemoryLimiter({ algorithm: gcra({ limit: 1, periodMs: 1000 }) });
    const limiter = withFailurePolicy({ ...inner, close: async () => void closed++ });
    await limiter.close();
    expect(closed).toBe(1);
  });

  it('invalid options throw ConfigError at construction', () => {
    const inner = createMemoryLimiter({ algorithm: gcra({ limit: 1, periodMs: 1000 }) });
    expect(() => withFailurePolicy(inner, { deadlineMs: 0 })).toThrow(ConfigError);
    expect(() => withFailurePolicy(inner, { failure: 'fallback' })).toThrow(/needs the fallback option/);
    expect(() => withFailurePolicy(inner, { failure: 'nope' as never })).toThrow(ConfigError);
    expect(() => withFailurePolicy(inner, { fallback: { instances: 0 } })).toThrow(ConfigError);
    expect(() => withFailurePolicy(inner, { fallback: {} as never })).toThrow(ConfigError);
    expect(() => withFailurePolicy(inner, { breaker: { failureThreshold: -1 } })).toThrow(ConfigError);
    const other = {
      ...inner,
      algorithm: { ...inner.algorithm, name: 'leaky-bucket' as never, divide: undefined as never },
    };
    expect(() => withFailurePolicy(other, { fallback: { instances: 2 } })).toThrow(ConfigError);
  });
});

// The wrapper is transparent when the store is healthy: the whole suite holds through it.
const shared = new WeakMap<Algorithm, MemoryLimiter>();
runConformance({
  name: 'withFailurePolicy(memory store)',
  test: { describe, it },
  create(algorithm, clock) {
    let inner = shared.get(algorithm);
    if (!inner) {
      inner = createMemoryLimiter({ algorithm, clock: clock.now, pruneIntervalMs: 0 });
      shared.set(algorithm, inner);
    }
    return withFailurePolicy(inner, { deadlineMs: 1000, failure: 'closed' });
  },
});

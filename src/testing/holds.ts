import assert from 'node:assert/strict';
import type { HoldStore } from '../concurrency/types.js';
import type { TestApi } from './conformance.js';

/** A hold store to hold to {@link runHoldConformance}: Sluice's own, or a third-party backend. */
export interface HoldConformanceTarget {
  /** Shown in test names. */
  name: string;
  /**
   * A hold store on real time. Stores created with different `connection` numbers (0..3) must
   * share state, through separate connections where the store has them.
   */
  create(connection: number): HoldStore | Promise<HoldStore>;
  test: TestApi;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
let keySequence = 0;
const uniqueKey = () => `holds:${++keySequence}:${Math.random().toString(36).slice(2, 10)}`;
let idSequence = 0;
const uniqueId = () => `hold-${++idSequence}-${Math.random().toString(36).slice(2, 10)}`;

type Check = (target: HoldConformanceTarget) => Promise<void>;

const properties: Record<string, Check> = {
  async 'grants exactly limit of 200 concurrent acquires from 4 connections'(target) {
    const stores = await Promise.all([0, 1, 2, 3].map((connection) => target.create(connection)));
    const key = uniqueKey();
    const answers = await Promise.all(
      Array.from({ length: 200 }, (_, i) => (stores[i % 4] as HoldStore).acquire(key, uniqueId(), 7, 60_000)),
    );
    assert.equal(answers.filter((answer) => answer.granted).length, 7);
    assert.equal(await (stores[0] as HoldStore).held(key), 7);
    for (const answer of answers.filter((each) => !each.granted)) {
      assert.equal(answer.held, 7);
      assert.ok(answer.retryAfterMs > 0 && answer.retryAfterMs <= 60_000, `retryAfterMs ${answer.retryAfterMs}`);
    }
  },
  async 'release frees one slot at once; releasing twice or an unknown id changes nothing'(target) {
    const store = await target.create(0);
    const key = uniqueKey();
    const [a, b] = [uniqueId(), uniqueId()];
    assert.equal((await store.acquire(key, a, 2, 60_000)).granted, true);
    assert.equal((await store.acquire(key, b, 2, 60_000)).granted, true);
    assert.equal((await store.acquire(key, uniqueId(), 2, 60_000)).granted, false);
    await store.release(key, a);
    await store.release(key, a);
    await store.release(key, uniqueId());
    assert.equal(await store.held(key), 1);
    assert.equal((await store.acquire(key, uniqueId(), 2, 60_000)).granted, true);
    assert.equal((await store.acquire(key, uniqueId(), 2, 60_000)).granted, false);
  },
  async 'renew extends a live hold and refuses a released one, writing nothing'(target) {
    const store = await target.create(0);
    const key = uniqueKey();
    const [a, b] = [uniqueId(), uniqueId()];
    await store.acquire(key, a, 2, 60_000);
    await store.acquire(key, b, 2, 60_000);
    assert.equal(await store.renew(key, a, 60_000), true);
    await store.release(key, b);
    assert.equal(await store.renew(key, b, 60_000), false);
    assert.equal(await store.held(key), 1);
  },
  async 'holds expire after holdMs by themselves; an expired hold cannot be renewed'(target) {
    const store = await target.create(1);
    const key = uniqueKey();
    const id = uniqueId();
    assert.equal((await store.acquire(key, id, 1, 100)).granted, true);
    const denied = await store.acquire(key, uniqueId(), 1, 100);
    assert.equal(denied.granted, false);
    assert.ok(denied.retryAfterMs > 0 && denied.retryAfterMs <= 100, `retryAfterMs ${denied.retryAfterMs}`);
    await sleep(150);
    assert.equal(await store.held(key), 0);
    assert.equal(await store.renew(key, id, 100), false);
    assert.equal((await store.acquire(key, uniqueId(), 1, 100)).granted, true);
  },
  async 'keys are independent'(target) {
    const store = await target.create(2);
    const [k1, k2] = [uniqueKey(), uniqueKey()];
    assert.equal((await store.acquire(k1, uniqueId(), 1, 60_000)).granted, true);
    assert.equal((await store.acquire(k2, uniqueId(), 1, 60_000)).granted, true);
    assert.equal((await store.acquire(k1, uniqueId(), 1, 60_000)).granted, false);
  },
};

/**
 * Registers the hold-store properties for `target` (concurrency limits: exact under concurrent
 * acquires, release and renew, expiry on their own). Assertions use `node:assert`, so any test
 * framework can host it.
 *
 * @example
 * ```ts
 * import { describe, it } from 'vitest';
 * import { memoryHolds } from 'sluice/concurrency';
 * import { runHoldConformance } from 'sluice/testing';
 *
 * const store = memoryHolds();
 * runHoldConformance({ name: 'memory holds', test: { describe, it }, create: () => store });
 * ```
 */
export function runHoldConformance(target: HoldConformanceTarget): void {
  const { describe, it } = target.test;
  describe(`hold conformance: ${target.name}`, () => {
    for (const [name, check] of Object.entries(properties)) it(name, () => check(target));
  });
}

import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { createConcurrencyLimiter, memoryHolds } from '../../src/concurrency/index.js';
import { ConfigError, InvalidKeyError } from '../../src/index.js';

const BAD_KEYS = ['', 'x'.repeat(513), '\ud800', 42, undefined, { id: 'k' }] as unknown as string[];

function setup({ maxKeys, ...options }: { limit: number; holdMs: number; heartbeatMs?: number; maxKeys?: number }) {
  let nowMs = 1000;
  const store = memoryHolds({ maxKeys, clock: () => nowMs });
  const limiter = createConcurrencyLimiter({ ...options, store });
  return { limiter, advance: (ms: number) => (nowMs += ms) };
}

async function granted(limiter: ReturnType<typeof setup>['limiter'], key: string) {
  const acquired = await limiter.acquire(key);
  if (!acquired.allowed) throw new Error(`expected a hold of '${key}'`);
  return acquired.hold;
}

describe('concurrency limiter on memory', () => {
  it('grants exactly limit holds, then denies until the earliest hold expires', async () => {
    const { limiter, advance } = setup({ limit: 3, holdMs: 1000 });
    const answers = [];
    for (let i = 0; i < 3; i++) {
      answers.push(await limiter.acquire('k'));
      advance(100);
    }
    expect(answers.map((a) => [a.allowed, a.held])).toEqual([
      [true, 1],
      [true, 2],
      [true, 3],
    ]);
    // First hold expires at 1000, now is 300.
    expect(await limiter.acquire('k')).toEqual({ allowed: false, limit: 3, held: 3, retryAfterMs: 700 });
    advance(699);
    expect((await limiter.acquire('k')).allowed).toBe(false);
    advance(1);
    expect(await limiter.held('k')).toBe(2);
    expect((await limiter.acquire('k')).allowed).toBe(true);
    expect((await limiter.acquire('other')).allowed).toBe(true);
  });

  it('release frees the slot at once and is idempotent', async () => {
    const { limiter } = setup({ limit: 1, holdMs: 1000 });
    const hold = await granted(limiter, 'k');
    expect((await limiter.acquire('k')).allowed).toBe(false);
    await hold.release();
    await hold.release();
    const next = await granted(limiter, 'k');
    // A second release of the old hold must not free the new one.
    await hold.release();
    expect(await limiter.held('k')).toBe(1);
    expect(await hold.renew()).toBe(false);
    await next.release();
    expect(await limiter.held('k')).toBe(0);
  });

  it('renew keeps a hold past holdMs; renewing an expired hold fails and aborts its signal', async () => {
    const { limiter, advance } = setup({ limit: 1, holdMs: 1000 });
    const hold = await granted(limiter, 'k');
    advance(900);
    expect(await hold.renew()).toBe(true);
    advance(900);
    expect(await limiter.held('k')).toBe(1);
    advance(100);
    expect(await limiter.held('k')).toBe(0);
    expect(await hold.renew()).toBe(false);
    expect(hold.signal.aborted).toBe(true);
    // The expired hold's renewal wrote nothing: the slot is free for someone else.
    expect((await limiter.acquire('k')).allowed).toBe(true);
  });

  it('heartbeatMs renews open holds until release', async () => {
    const { limiter, advance } = setup({ limit: 1, holdMs: 100, heartbeatMs: 10 });
    const hold = await granted(limiter, 'k');
    for (let i = 0; i < 5; i++) {
      advance(90); // past holdMs overall: only renewals keep the hold
      await sleep(40);
    }
    expect(await limiter.held('k')).toBe(1);
    expect(hold.signal.aborted).toBe(false);
    await hold.release();
    await sleep(40);
    expect(await limiter.held('k')).toBe(0);
  });

  it('close releases every open hold', async () => {
    const { limiter } = setup({ limit: 2, holdMs: 1000 });
    await granted(limiter, 'a');
    await granted(limiter, 'b');
    await limiter.close();
    expect([await limiter.held('a'), await limiter.held('b')]).toEqual([0, 0]);
  });

  it('a full store forgets only keys whose holds all expired; a new key is denied, never a live key forgotten', async () => {
    const { limiter, advance } = setup({ limit: 1, holdMs: 1000, maxKeys: 2 });
    await granted(limiter, 'a');
    advance(500);
    await granted(limiter, 'b');
    expect(await limiter.acquire('c')).toEqual({ allowed: false, limit: 1, held: 0, retryAfterMs: 500 });
    expect((await limiter.acquire('a')).allowed).toBe(false);
    advance(500); // a's hold expired: its key can go
    expect((await limiter.acquire('c')).allowed).toBe(true);
    expect((await limiter.acquire('b')).allowed).toBe(false);
  });

  it('rejects bad keys with InvalidKeyError before touching the store', async () => {
    const { limiter } = setup({ limit: 1, holdMs: 1000 });
    for (const key of ['', 'x'.repeat(513), '\ud800', 42 as unknown as string]) {
      await expect(limiter.acquire(key)).rejects.toBeInstanceOf(InvalidKeyError);
    }
    expect((await limiter.acquire('k')).allowed).toBe(true);
  });

  it('the store called directly rejects bad keys with InvalidKeyError, as the limiter does', async () => {
    const store = memoryHolds({ maxKeys: 1 });
    for (const key of BAD_KEYS) {
      await expect(store.acquire(key, 'id', 1, 1000)).rejects.toBeInstanceOf(InvalidKeyError);
      await expect(store.renew(key, 'id', 1000)).rejects.toBeInstanceOf(InvalidKeyError);
      await expect(store.release(key, 'id')).rejects.toBeInstanceOf(InvalidKeyError);
      await expect(store.held(key)).rejects.toBeInstanceOf(InvalidKeyError);
    }
    // Nothing was kept: the one key the store may hold is still free.
    expect(await store.acquire('k', 'id', 1, 1000)).toMatchObject({ granted: true, held: 1 });
  });

  it.each([
    [{ limit: 0, holdMs: 1000 }, /limit/],
    [{ limit: 1.5, holdMs: 1000 }, /limit/],
    [{ limit: 1, holdMs: 0 }, /holdMs/],
    [{ limit: 1, holdMs: 2 ** 31 }, /holdMs/],
    [{ limit: 1, holdMs: null }, /holdMs/],
    [{ limit: 1, holdMs: 1000, heartbeatMs: 1000 }, /heartbeatMs/],
    [{ limit: 1, holdMs: 1000, heartbeatMs: -1 }, /heartbeatMs/],
    [{ limit: 1, holdMs: 1000, store: null }, /store/],
    [{ limit: 1, holdMs: 1000, store: {} }, /store/],
  ])('ConfigError naming the option for %o', (options, name) => {
    expect(() => createConcurrencyLimiter(options as never)).toThrow(ConfigError);
    expect(() => createConcurrencyLimiter(options as never)).toThrow(name);
  });

  it('ConfigError for options that are not an object, and for memoryHolds options', () => {
    expect(() => createConcurrencyLimiter(undefined as never)).toThrow(ConfigError);
    expect(() => memoryHolds({ maxKeys: 0 })).toThrow(/maxKeys/);
    expect(() => memoryHolds({ clock: 5 as never })).toThrow(/clock/);
  });
});

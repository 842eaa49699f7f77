import { describe, expect, it } from 'vitest';
import { TIMED_OUT, withDeadline } from '../../src/deadline.js';
import { startRedis } from '../support/redis-server.js';

function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe('withDeadline', () => {
  it('settles like the work when it settles in time', async () => {
    let late = 0;
    await expect(withDeadline(Promise.resolve(7), 1000, () => late++)).resolves.toBe(7);
    await expect(withDeadline(Promise.reject(new Error('no')), 1000, () => late++)).rejects.toThrow('no');
    expect(late).toBe(0);
  });

  it('answers TIMED_OUT when the deadline passes; a late reply only reaches onLate', async () => {
    const work = deferred<number>();
    let late = 0;
    const outcome = await withDeadline(work.promise, 5, () => late++);
    expect(outcome).toBe(TIMED_OUT);
    work.resolve(1);
    await work.promise;
    expect(late).toBe(1);
  });

  it('a late rejection is absorbed: onLate, and no unhandled rejection', async () => {
    const unhandled: unknown[] = [];
    const listener = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', listener);
    try {
      const work = deferred<number>();
      let late = 0;
      expect(await withDeadline(work.promise, 5, () => late++)).toBe(TIMED_OUT);
      work.reject(new Error('late'));
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(late).toBe(1);
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', listener);
    }
  });
});

describe('withDeadline after a stall of this process (real redis-server)', () => {
  it('a reply that arrived while the event loop was blocked past the deadline still wins', async () => {
    const redis = await startRedis();
    try {
      const client = redis.connect();
      await client.ping();
      for (let i = 0; i < 5; i++) {
        const outcome = withDeadline(client.ping(), 20, () => {});
        const blockUntil = performance.now() + 100; // Redis answers meanwhile; the timer is due too
        while (performance.now() < blockUntil) {}
        expect(await outcome).toBe('PONG');
      }
    } finally {
      await redis.stop();
    }
  });
});

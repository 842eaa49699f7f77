import type { Decision, Limiter, LimitOptions } from '../../../src/index.js';

/** A remote that records what the leased limiter asked of it: the count is the proof, not time. */
export interface RecordingRemote extends Limiter {
  /** Costs of every `limit` call, in order (lease sizes asked). */
  readonly asked: number[];
  /** Units of every `refund` call, in order. */
  readonly refunded: number[];
  /** `limit` + `peek` calls. */
  calls(): number;
  /** Units the remote admitted through `limit`, minus units refunded. */
  granted(): number;
}

/**
 * Wraps `inner`, recording calls. `hold(key)` makes the next `limit` calls for `key` wait until
 * the returned release function runs (to show who waits on a lease in flight and who does not).
 */
export function recordingRemote(inner: Limiter): RecordingRemote & { hold(key: string): () => void } {
  const asked: number[] = [];
  const refunded: number[] = [];
  let peeks = 0;
  let admitted = 0;
  const held = new Map<string, Promise<void>>();
  const refund = inner.refund;
  return {
    algorithm: inner.algorithm,
    asked,
    refunded,
    calls: () => asked.length + peeks,
    granted: () => admitted - refunded.reduce((sum, units) => sum + units, 0),
    hold(key) {
      let release = () => {};
      held.set(
        key,
        new Promise<void>((resolve) => {
          release = () => {
            held.delete(key);
            resolve();
          };
        }),
      );
      return () => release();
    },
    async limit(key: string, options?: LimitOptions): Promise<Decision> {
      asked.push(options?.cost ?? 1);
      await held.get(key);
      const decision = await inner.limit(key, options);
      if (decision.allowed) admitted += options?.cost ?? 1;
      return decision;
    },
    peek(key) {
      peeks++;
      return inner.peek(key);
    },
    reset: (key) => inner.reset(key),
    ...(refund && {
      async refund(key: string, units: number) {
        refunded.push(units);
        await refund.call(inner, key, units);
      },
    }),
    close: () => inner.close(),
  };
}

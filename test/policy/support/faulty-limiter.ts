import { StoreUnavailableError } from '../../../src/errors.js';
import type { Limiter } from '../../../src/limiter.js';

/**
 * A real limiter with a store fault switched on and off by the test:
 * - `'hang'`: calls wait until `release()`, then run (a hung store applying late scripts);
 * - `'refuse'` / `'script'`: calls reject as the Redis store does on a refused connection / a
 *   script error reply;
 * - `'bug'`: calls reject with a TypeError (not a store failure).
 */
export type Fault = 'none' | 'hang' | 'refuse' | 'script' | 'bug';

export interface FaultyLimiter {
  limiter: Limiter;
  fault: Fault;
  /** Calls that reached this limiter. */
  readonly calls: number;
  /** Runs every hung call now. */
  release(): Promise<void>;
}

export function faultyLimiter(inner: Limiter): FaultyLimiter {
  let calls = 0;
  let hung: (() => Promise<void>)[] = [];
  const control: FaultyLimiter = {
    limiter: undefined as unknown as Limiter,
    fault: 'none',
    get calls() {
      return calls;
    },
    async release() {
      const waiting = hung;
      hung = [];
      await Promise.all(waiting.map((run) => run()));
    },
  };
  const run = <T>(work: () => Promise<T>): Promise<T> => {
    calls++;
    switch (control.fault) {
      case 'hang':
        return new Promise<T>((resolve, reject) => {
          hung.push(() => work().then(resolve, reject));
        });
      case 'refuse':
        return Promise.reject(
          new StoreUnavailableError('Redis could not decide', new Error('connect ECONNREFUSED 127.0.0.1:1')),
        );
      case 'script':
        return Promise.reject(
          new StoreUnavailableError('Redis could not decide', new Error('ERR Error running script: wrong arity')),
        );
      case 'bug':
        return Promise.reject(new TypeError('a bug in the wrapped limiter'));
      default:
        return work();
    }
  };
  control.limiter = {
    algorithm: inner.algorithm,
    limit: (key, options) => run(() => inner.limit(key, options)),
    peek: (key) => run(() => inner.peek(key)),
    reset: (key) => run(() => inner.reset(key)),
    close: () => inner.close(),
  };
  const { refund } = inner;
  if (refund) control.limiter.refund = (key, units) => run(() => refund.call(inner, key, units));
  return control;
}

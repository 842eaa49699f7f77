import type { Redis } from 'ioredis';
import { type Algorithm, createMemoryLimiter, type Decision, type Limiter } from '../../src/index.js';
import { createRedisLimiter } from '../../src/stores/redis/index.js';
import type { ReferenceModel } from '../../src/testing/reference/types.js';
import { held } from '../support/held-keys.js';

/** A limiter on a clock the test sets: `decide(key, atMs, cost)` moves the clock to `atMs`, then asks. */
export interface Driven {
  decide(key: string, atMs: number, cost?: number): Promise<Decision>;
}

/** Where a case runs: the memory store, the Redis store (client clock), and the reference model. */
export interface Target {
  readonly name: string;
  drive(algorithm: Algorithm, model: ReferenceModel): Driven;
}

/** Epoch-like start time, so Redis TTLs and stored times look like production ones. */
export const T0 = 1_700_000_000_000;

function driven(limiter: Limiter, setClock: (ms: number) => void): Driven {
  return {
    decide(key, atMs, cost = 1) {
      setClock(atMs);
      return limiter.limit(key, { cost });
    },
  };
}

let prefixes = 0;
/** A fresh key prefix per limiter, so cases never share Redis state. */
export const freshPrefix = (label: string) => `${label}${++prefixes}:`;

export function targets(redis: () => Redis): Target[] {
  return [
    {
      name: 'memory',
      drive(algorithm) {
        let nowMs = T0;
        const limiter = createMemoryLimiter({ algorithm, clock: () => nowMs, pruneIntervalMs: 0 });
        return driven(limiter, (ms) => (nowMs = ms));
      },
    },
    {
      name: 'redis',
      drive(algorithm) {
        let nowMs = T0;
        const limiter = createRedisLimiter({
          // Keys held: the test clock jumps and stands still while Redis expires on real time.
          client: held(redis()),
          algorithm,
          prefix: freshPrefix('case'),
          clock: () => nowMs,
        });
        return driven(limiter, (ms) => (nowMs = ms));
      },
    },
    {
      name: 'reference model',
      drive(_algorithm, model) {
        return {
          decide: async (key, atMs, cost = 1) => model.decide(key, atMs, cost),
        };
      },
    },
  ];
}

import { describe, it } from 'vitest';
import { type Algorithm, createMemoryLimiter, type MemoryLimiter } from '../../src/index.js';
import { runConformance } from '../../src/testing/index.js';

// One process has one memory: every "connection" of the suite shares the same limiter.
const shared = new WeakMap<Algorithm, MemoryLimiter>();

runConformance({
  name: 'memory store',
  test: { describe, it },
  capabilities: ['partial'],
  create(algorithm, clock) {
    let limiter = shared.get(algorithm);
    if (!limiter) {
      limiter = createMemoryLimiter({ algorithm, clock: clock.now, pruneIntervalMs: 0 });
      shared.set(algorithm, limiter);
    }
    return limiter;
  },
});

import { describe, expect, it } from 'vitest';
import { gcra } from '../../src/index.js';
import { createRedisLimiter } from '../../src/stores/redis/index.js';
import { useRedisServer } from '../support/redis-server.js';

const { redis } = useRedisServer();

// docs/deployment.md: with clock: 'client', a client ahead by s ms gains about s / T units.
describe("Redis clock: 'client' skew", () => {
  for (const [skewMs, gained] of [
    [500, 0],
    [1000, 1],
    [3000, 3],
    [9999, 9],
  ] as const) {
    it(`limit 10 per 10 s (T = 1000 ms): a client ahead by ${skewMs} ms takes ${gained} more once the key is spent`, async () => {
      const t = 1_700_000_000_000;
      const prefix = `skew${skewMs}:`;
      const algorithm = gcra({ limit: 10, periodMs: 10_000 });
      const honest = createRedisLimiter({ client: redis(), algorithm, prefix, clock: () => t, onWarning: false });
      const ahead = createRedisLimiter({
        client: redis(),
        algorithm,
        prefix,
        clock: () => t + skewMs,
        onWarning: false,
      });
      for (let i = 0; i < 10; i++) expect((await honest.limit('k')).allowed).toBe(true);
      expect((await honest.limit('k')).allowed).toBe(false);
      let extra = 0;
      while ((await ahead.limit('k')).allowed) extra++;
      expect(extra).toBe(gained);
      // Time stored never moves backwards: the honest client gains nothing back from it.
      expect((await honest.limit('k')).allowed).toBe(false);
    });
  }
});

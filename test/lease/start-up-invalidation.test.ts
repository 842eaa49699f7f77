import { describe, expect, it } from 'vitest';
import { createLeasedLimiter, gcra, type Limiter } from '../../src/index.js';
import { createRedisLimiter } from '../../src/stores/redis/index.js';
import { useRedisServer } from '../support/redis-server.js';

// A leased instance with a pub/sub subscriber hears "any key" (`undefined`) once its subscription
// is live, at start-up and after every reconnection. A lease in flight then must not lose its
// spare units: they were granted and are spent in Redis, so dropping them strands them.

const { server } = useRedisServer();
const HOUR_MS = 3_600_000;

describe('the first "any key" notice and a lease in flight', () => {
  it('keeps the lease: 100 of 100 admitted at start-up (91 before: the reply was dropped)', async () => {
    const client = server().connect();
    const subscriber = server().connect();
    let open = () => {};
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    const inner = createRedisLimiter({ client, subscriber, algorithm: gcra({ limit: 100, periodMs: HOUR_MS }) });
    // The lease's reply is held until the subscription is live and its "any key" notice heard.
    const remote: Limiter = {
      ...inner,
      async limit(key, options) {
        const decision = await inner.limit(key, options);
        await gate;
        return decision;
      },
    };
    const leased = createLeasedLimiter({ remote, leaseSize: 10 });
    const first = leased.limit('k');
    while (!inner.invalidations?.live) await new Promise((resolve) => setTimeout(resolve, 5));
    open();
    let admitted = (await first).allowed ? 1 : 0;
    for (let i = 0; i < 150; i++) admitted += (await leased.limit('k')).allowed ? 1 : 0;
    expect(admitted).toBe(100);
    // The 9 spare units were kept and confirmed with one cost-0 call before they were spent.
    expect(leased.stats()).toMatchObject({ invalidations: 1, expiredUnits: 0 });
    await leased.close();
  });
});

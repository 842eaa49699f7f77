import { once } from 'node:events';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gcra } from '../../src/algorithms/gcra.js';
import { createLeasedLimiter, type LeasedLimiter } from '../../src/lease/leased-limiter.js';
import type { Limiter } from '../../src/limiter.js';
import { createRedisLimiter } from '../../src/stores/redis/index.js';
import { type RedisServer, startRedis } from '../support/redis-server.js';
import { send } from './support/client.js';
import { type Harness, harnesses, type TestServer } from './support/harnesses.js';
import { manualClock } from './support/scenarios.js';

/*
 * RateLimit headers behind a leased limiter (docs/leasing.md#headers-behind-a-lease), against a
 * real redis-server, instances sharing one manual clock so no unit regenerates between requests:
 * GCRA 1,000 per hour (T = 3.6 s), leases of 10.
 *
 * remaining = the remote's remaining as of this instance's last reply + the units it holds;
 * reset     = the remote's reset as of that reply − the held units' slots (held × T).
 */
const T_MS = 3_600;
const algorithm = gcra({ limit: 1000, periodMs: 1000 * T_MS });
const harness = harnesses[0] as Harness;
let redis: RedisServer;
let client: Redis;

beforeAll(async () => {
  redis = await startRedis();
  client = new Redis({ host: '127.0.0.1', port: redis.port });
  await once(client, 'ready');
});
afterAll(async () => {
  client?.disconnect();
  await redis?.stop();
});

function fleet(prefix: string) {
  const clock = manualClock(Date.now());
  const remote = createRedisLimiter({ client, algorithm, clock: clock.read, prefix });
  const servers: TestServer[] = [];
  const leased: LeasedLimiter[] = [];
  return {
    remote,
    async start(limiter: Limiter = createLeasedLimiter({ remote, leaseSize: 10, clock: clock.read })) {
      if ('returnIdle' in limiter) leased.push(limiter as LeasedLimiter);
      const server = await harness.start({ limits: { name: 'pro', limiter, key: () => 'acme' }, onWarning: false });
      servers.push(server);
      return async () => (await send(`${server.url}/hello`)).headers.get('ratelimit');
    },
    leased,
    async close() {
      await Promise.all(leased.map((limiter) => limiter.close()));
      await Promise.all(servers.map((server) => server.close()));
    },
  };
}

describe('RateLimit headers behind a lease (leaseSize 10, real Redis)', () => {
  it('one instance: the same headers as the unleased limiter, request after request', async () => {
    const leasedFleet = fleet('lease-one:');
    const bareFleet = fleet('bare-one:');
    try {
      const viaLease = await leasedFleet.start();
      const bare = await bareFleet.start(bareFleet.remote);
      for (let i = 1; i <= 12; i++) {
        const expected = `"pro";r=${1000 - i};t=${Math.ceil((i * T_MS) / 1000)}`;
        expect([await viaLease(), await bare()]).toEqual([expected, expected]);
      }
    } finally {
      await leasedFleet.close();
      await bareFleet.close();
    }
  });

  it('three instances: each reports the remote as of its last lease plus its own held units', async () => {
    const { start, remote, leased, close } = fleet('lease-three:');
    try {
      const [a, b, c] = [await start(), await start(), await start()];
      // a leases slots 1-10 and spends 1: the remote holds 990, a 9.
      expect(await a()).toBe('"pro";r=999;t=4');
      // b leases 11-20: it last heard 980 and holds 9; a's 9 count as spent. Reset 20 T − 9 T.
      expect(await b()).toBe('"pro";r=989;t=40');
      // c leases 21-30: 970 + 9; reset 30 T − 9 T.
      expect(await c()).toBe('"pro";r=979;t=76');
      // a serves from its lease: 990 as last heard + 8 held; reset 10 T − 8 T. It does not see
      // b's and c's leases, so it reports 2 more than the 996 the fleet has left unspent.
      expect(await a()).toBe('"pro";r=998;t=8');
      expect(await remote.peek('pro:id:acme')).toMatchObject({ remaining: 970, resetAfterMs: 30 * T_MS });

      // a returns its 8 units (close): the remote holds 978. b still reports what it last heard.
      await (leased[0] as LeasedLimiter).close();
      expect(await remote.peek('pro:id:acme')).toMatchObject({ remaining: 978 });
      expect(await b()).toBe('"pro";r=988;t=44'); // 980 + 8 held; reset 20 T − 8 T
    } finally {
      await close();
    }
  });
});

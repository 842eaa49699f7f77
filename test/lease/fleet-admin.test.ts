import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Algorithm,
  createLeasedLimiter,
  fixedWindow,
  gcra,
  type LeasedLimiter,
  type Limiter,
} from '../../src/index.js';
import { createRedisLimiter } from '../../src/stores/redis/index.js';
import { type RedisServer, startRedis } from '../support/redis-server.js';

// Leased instances on one real redis-server, each with its own client and subscriber connection:
// what an admin call on one does to the units the others hold.

const HOUR_MS = 3_600_000;

interface Instance {
  readonly leased: LeasedLimiter;
  readonly remote: Limiter;
}

let server: RedisServer;
let prefixes = 0;
const owned: Redis[] = [];

beforeAll(async () => {
  server = await startRedis();
});
afterAll(async () => {
  for (const connection of owned) connection.disconnect();
  await server.stop();
});

/** A connection of our own; a subscriber one reconnects `reconnectMs` after a drop. */
function connection(reconnectMs = 50): Redis {
  const redis = new Redis({ port: server.port, host: '127.0.0.1', retryStrategy: () => reconnectMs });
  redis.on('error', () => {});
  owned.push(redis);
  return redis;
}

async function until(condition: () => boolean): Promise<void> {
  for (let waited = 0; !condition(); waited += 5) {
    if (waited > 5_000) throw new Error('condition not met within 5 s');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

async function fleetOf(size: number, algorithm: () => Algorithm, leaseSize: number, reconnectMs = 50) {
  const prefix = `fleet-admin:${++prefixes}:`;
  const fleet: Instance[] = Array.from({ length: size }, () => {
    const remote = createRedisLimiter({
      client: connection(),
      subscriber: connection(reconnectMs),
      algorithm: algorithm(),
      prefix,
      onWarning: false,
    });
    return { remote, leased: createLeasedLimiter({ remote, leaseSize }) };
  });
  await until(() => fleet.every(({ remote }) => remote.invalidations?.live === true));
  return fleet;
}

/** Asks each instance in turn until every one denies; how many were admitted. */
async function drain(fleet: Instance[], key: string): Promise<number> {
  let admitted = 0;
  const open = new Set(fleet);
  while (open.size > 0) {
    for (const instance of [...open]) {
      if ((await instance.leased.limit(key)).allowed) admitted++;
      else open.delete(instance);
    }
  }
  return admitted;
}

const heard = (instance: Instance) => instance.leased.stats().invalidations;

const algorithms: [string, () => Algorithm][] = [
  ['GCRA, burst 30 an hour', () => gcra({ limit: 30, periodMs: HOUR_MS })],
  ['fixed window, 30 an hour', () => fixedWindow({ limit: 30, windowMs: HOUR_MS })],
];

describe.each(algorithms)('a reward on a key with leases out, %s, 3 instances at lease 10', (_name, algorithm) => {
  it('lifts the key to fresh at most: held units and the remote together stay within 30', async () => {
    const fleet = await fleetOf(3, algorithm, 10);
    const [a] = fleet as [Instance];
    // Each instance leases 10 and spends 1: the remote is empty, 27 units are held.
    for (const { leased } of fleet) expect((await leased.limit('k')).allowed).toBe(true);
    expect(fleet.reduce((sum, { leased }) => sum + leased.stats().heldUnits, 0)).toBe(27);
    const before = fleet.map(heard);
    await a.leased.reward?.('k', 30);
    await until(() => fleet.every((instance, at) => heard(instance) > (before[at] as number)));
    // Before: 57 (the 27 held were kept on top of a fresh remote).
    expect(await drain(fleet, 'k')).toBeLessThanOrEqual(30);
    for (const { leased } of fleet) {
      const stats = leased.stats();
      expect(stats.leasedUnits + stats.refundedUnits).toBe(
        stats.spentUnits + stats.heldUnits + stats.expiredUnits + stats.returnedUnits + stats.droppedUnits,
      );
    }
  });

  it('raced with a request on every instance: at most 30 and the 3 units those requests spent', async () => {
    const fleet = await fleetOf(3, algorithm, 10);
    const [a] = fleet as [Instance];
    for (const { leased } of fleet) await leased.limit('k');
    const before = fleet.map(heard);
    const raced = await Promise.all([
      ...fleet.map(({ leased }) => leased.limit('k')),
      a.leased.reward?.('k', 30).then(() => undefined),
    ]);
    await until(() => fleet.every((instance, at) => heard(instance) > (before[at] as number)));
    const admitted = raced.filter((decision) => decision?.allowed).length + (await drain(fleet, 'k'));
    // Before: 60.
    expect(admitted).toBeLessThanOrEqual(33);
  });
});

describe('a leased instance whose subscription is down, holding units of a key another instance blocked', () => {
  it('denies every request as blocked, never asking the remote for a negative cost', async () => {
    // A subscriber that stays down for 2 s after CLIENT KILL: `live` is false meanwhile.
    const [a, b] = (await fleetOf(2, () => gcra({ limit: 1_000, periodMs: HOUR_MS }), 200, 2_000)) as [
      Instance,
      Instance,
    ];
    expect((await b.leased.limit('k')).allowed).toBe(true);
    expect(b.leased.stats().heldUnits).toBe(199);
    const admin = connection();
    await admin.call('CLIENT', 'KILL', 'TYPE', 'pubsub');
    await until(() => b.remote.invalidations?.live === false);
    await a.leased.block?.('k', 60_000);
    for (let i = 0; i < 5; i++) {
      // Before: the first denied, then InvalidCostError: cost must be a non-negative safe integer, got −198.
      expect(await b.leased.limit('k')).toMatchObject({ allowed: false, reason: 'blocked' });
    }
    expect(b.leased.stats().heldUnits).toBe(199);
    await a.leased.unblock?.('k');
    // Still not live: the next request asks once whether the key is blocked, then spends a held unit.
    expect(await b.leased.limit('k')).toMatchObject({ allowed: true });
    expect(b.leased.stats().heldUnits).toBe(198);
  });
});

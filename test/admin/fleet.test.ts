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
import { startCluster, type TestCluster } from '../support/cluster.js';
import { type RedisServer, startRedis } from '../support/redis-server.js';

// Three leased instances, each with its own connections to a real Redis: an admin operation on
// one reaches the others through pub/sub on the limiter's prefix, not after their leases and
// cached refusals run out (an hour here).

const HOUR_MS = 3_600_000;
const algorithms: [string, () => Algorithm][] = [
  ['fixed window, hourly', () => fixedWindow({ limit: 30, windowMs: HOUR_MS })],
  ['GCRA, hourly', () => gcra({ limit: 30, periodMs: HOUR_MS })],
];

interface Instance {
  readonly leased: LeasedLimiter;
  readonly remote: Limiter;
  readonly subscriber: Redis;
}

let server: RedisServer;
let cluster: TestCluster;
let prefixes = 0;
const owned: Redis[] = [];

beforeAll(async () => {
  [server, cluster] = await Promise.all([startRedis(), startCluster({ masters: 3 })]);
});
afterAll(async () => {
  for (const connection of owned) connection.disconnect();
  await Promise.all([server.stop(), cluster.stop()]);
});

/** A subscriber on its own connection; it reconnects `reconnectMs` after a drop. */
function subscriberConnection(reconnectMs: number): Redis {
  const connection = new Redis({ port: server.port, host: '127.0.0.1', retryStrategy: () => reconnectMs });
  connection.on('error', () => {});
  owned.push(connection);
  return connection;
}

async function fleetOf(
  algorithm: () => Algorithm,
  connect: () => { client: unknown; subscriber: unknown },
): Promise<Instance[]> {
  const prefix = `fleet:${++prefixes}:`;
  const fleet = [0, 1, 2].map(() => {
    const { client, subscriber } = connect();
    const remote = createRedisLimiter({ client, subscriber, algorithm: algorithm(), prefix, onWarning: false });
    return { remote, leased: createLeasedLimiter({ remote, leaseSize: 10 }), subscriber: subscriber as Redis };
  });
  await until(() => fleet.every(({ remote }) => remote.invalidations?.live === true));
  return fleet;
}

async function until(condition: () => boolean): Promise<void> {
  for (let waited = 0; !condition(); waited += 5) {
    if (waited > 5_000) throw new Error('condition not met within 5 s');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

async function exhaust(limiter: Limiter, key: string): Promise<number> {
  let admitted = 0;
  while ((await limiter.limit(key)).allowed) admitted++;
  return admitted;
}

const heard = (instance: Instance) => instance.leased.stats().invalidations;

describe.each(algorithms)('a leased fleet of 3 on one Redis, %s', (_name, algorithm) => {
  const single = () => ({ client: server.connect(), subscriber: server.connect() });

  it('a reset on A admits the next request on B and C; a block on A denies there at once', async () => {
    const [a, b, c] = (await fleetOf(algorithm, single)) as [Instance, Instance, Instance];
    const total = (await exhaust(a.leased, 'k')) + (await exhaust(b.leased, 'k')) + (await exhaust(c.leased, 'k'));
    expect(total).toBe(30);
    for (const { leased } of [b, c]) {
      const callsBefore = leased.stats().remoteCalls;
      expect((await leased.limit('k')).allowed).toBe(false);
      expect(leased.stats().remoteCalls).toBe(callsBefore); // a cached refusal, good for an hour
    }

    const before = [b, c].map(heard);
    await a.leased.reset('k');
    await until(() => [b, c].every((instance, at) => heard(instance) > (before[at] as number)));
    for (const { leased } of [b, c]) expect((await leased.limit('k')).allowed).toBe(true);

    const heardBlock = [b, c].map(heard);
    await a.leased.block?.('k', 2_000);
    await until(() => [b, c].every((instance, at) => heard(instance) > (heardBlock[at] as number)));
    for (const { leased } of [b, c]) {
      const denied = await leased.limit('k');
      expect(denied).toMatchObject({ allowed: false, reason: 'blocked' });
      expect(denied.retryAfterMs).toBeGreaterThan(0);
      expect(denied.retryAfterMs).toBeLessThanOrEqual(2_000);
    }
    const waitMs = Math.max(
      ...(await Promise.all([b, c].map(({ leased }) => leased.limit('k')))).map((d) => d.retryAfterMs),
    );
    await new Promise((resolve) => setTimeout(resolve, waitMs + 5));
    for (const { leased } of [b, c]) expect((await leased.limit('k')).allowed).toBe(true);
  });

  it('a reset or a block while the subscriptions are down still reaches B at its next request', async () => {
    const [a, b, c] = (await fleetOf(algorithm, () => ({
      client: server.connect(),
      subscriber: subscriberConnection(300),
    }))) as [Instance, Instance, Instance];
    for (const instance of [a, b, c]) await exhaust(instance.leased, 'k');
    const admin = server.connect();
    // CLIENT KILL every pub/sub connection, then reset on A while they reconnect (300 ms): the
    // notice is published to nobody.
    await admin.call('CLIENT', 'KILL', 'TYPE', 'pubsub');
    await until(() => b.remote.invalidations?.live === false);
    await a.leased.reset('k');
    // B forgot every key when its subscription dropped and trusts no refusal while it is down:
    // its next request asks Redis, which was reset.
    const callsBefore = b.leased.stats().remoteCalls;
    expect((await b.leased.limit('k')).allowed).toBe(true);
    expect(b.leased.stats().remoteCalls).toBe(callsBefore + 1);
    const held = b.leased.stats().heldUnits;
    expect(held).toBe(9);

    await until(() => b.remote.invalidations?.live === true);
    await admin.call('CLIENT', 'KILL', 'TYPE', 'pubsub');
    await until(() => b.remote.invalidations?.live === false);
    await a.leased.block?.('k', 60_000);
    // B still holds 9 leased units, yet asks Redis once before spending them, and is denied.
    expect(await b.leased.limit('k')).toMatchObject({ allowed: false, reason: 'blocked' });
    expect(b.leased.stats().heldUnits).toBe(held);
    await until(() => b.remote.invalidations?.live === true);
  });
});

describe.each(algorithms)('a leased fleet of 3 on a Redis Cluster, %s', (_name, algorithm) => {
  it('a reset and a block on A reach B and C', async () => {
    const [a, b, c] = (await fleetOf(algorithm, () => ({
      client: cluster.connect(),
      subscriber: cluster.connect(),
    }))) as [Instance, Instance, Instance];
    for (const instance of [a, b, c]) await exhaust(instance.leased, 'tenant:1');
    const before = [b, c].map(heard);
    await a.leased.reset('tenant:1');
    await until(() => [b, c].every((instance, at) => heard(instance) > (before[at] as number)));
    for (const { leased } of [b, c]) expect((await leased.limit('tenant:1')).allowed).toBe(true);
    const heardBlock = [b, c].map(heard);
    await a.leased.block?.('tenant:1', 2_000);
    await until(() => [b, c].every((instance, at) => heard(instance) > (heardBlock[at] as number)));
    for (const { leased } of [b, c]) {
      expect(await leased.limit('tenant:1')).toMatchObject({ allowed: false, reason: 'blocked' });
    }
  });
});

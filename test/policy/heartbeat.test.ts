import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, StoreUnavailableError } from '../../src/errors.js';
import { createHeartbeat, type Heartbeat } from '../../src/stores/redis/index.js';
import { freePort, type RedisServer, startRedis } from '../support/redis-server.js';
import { countingClient, disconnectAll, resilientClient, sleep } from './support/clients.js';

let server: RedisServer;
let admin: Redis;
const beating: Heartbeat[] = [];
let fleet = 0;
const nextFleet = () => `fleet-${++fleet}`;

beforeAll(async () => {
  server = await startRedis();
  admin = server.connect();
});
afterEach(async () => {
  await Promise.all(beating.splice(0).map((h) => h.close()));
  disconnectAll();
});
afterAll(() => server.stop());

function heartbeat(options: Parameters<typeof createHeartbeat>[0]): Heartbeat {
  const h = createHeartbeat(options);
  beating.push(h);
  return h;
}

describe('heartbeat registry (real redis-server)', () => {
  it('three instances of one fleet count each other: N = 3, in one TTL’d, hash-tagged key', async () => {
    const name = nextFleet();
    const clients = await Promise.all([0, 1, 2].map(() => resilientClient(server.port)));
    const hs = clients.map((client, i) =>
      heartbeat({ client, name, instanceId: `i${i}`, intervalMs: 60_000, ttlMs: 120_000 }),
    );
    await Promise.all(hs.map((h) => h.beat().catch(() => 0)));
    expect(await Promise.all(hs.map((h) => h.beat()))).toEqual([3, 3, 3]);
    expect(hs.map((h) => h.instances())).toEqual([3, 3, 3]);
    const key = `sluice:instances:{${name}}`;
    expect(await admin.zrange(key, 0, -1)).toEqual(expect.arrayContaining(['i0', 'i1', 'i2']));
    const pttl = await admin.pttl(key);
    expect(pttl).toBeGreaterThan(0);
    expect(pttl).toBeLessThanOrEqual(120_000);
  });

  it('close removes the instance at once; the others count 2 at their next beat', async () => {
    const name = nextFleet();
    const clients = await Promise.all([0, 1, 2].map(() => resilientClient(server.port)));
    const hs = clients.map((client) => heartbeat({ client, name, intervalMs: 60_000 }));
    await Promise.all(hs.map((h) => h.beat())); // joins the first beats, sent at creation
    expect(await Promise.all(hs.map((h) => h.beat()))).toEqual([3, 3, 3]);
    await hs[2]?.close();
    expect(await hs[0]?.beat()).toBe(2);
    expect(hs[1]?.instances()).toBe(3); // still the last count it was told
    expect(await hs[1]?.beat()).toBe(2);
  });

  it('an instance that stops beating stops counting after ttlMs', async () => {
    const name = nextFleet();
    let now = 1_700_000_000_000;
    const clock = () => now;
    const a = heartbeat({ client: await resilientClient(server.port), name, intervalMs: 60_000, ttlMs: 90_000, clock });
    const b = heartbeat({ client: await resilientClient(server.port), name, intervalMs: 60_000, ttlMs: 90_000, clock });
    await a.beat();
    expect(await b.beat()).toBe(2);
    now += 89_999;
    expect(await b.beat()).toBe(2);
    now += 1;
    expect(await b.beat()).toBe(1);
  });

  it('store unreachable: nothing throws at creation; N is assumeInstances; beat rejects with StoreUnavailableError', async () => {
    const port = await freePort();
    const h = heartbeat({ client: await resilientClient(port, false), name: nextFleet(), assumeInstances: 3 });
    await expect(h.beat()).rejects.toBeInstanceOf(StoreUnavailableError);
    expect(h.instances()).toBe(3);
    expect(h.stats().failures).toBeGreaterThanOrEqual(1);
  });

  it('a hung store: the last known N stays; ticks wait for the beat in flight (no pile-up); beats resume', async () => {
    const paused = await startRedis();
    try {
      const client = countingClient(await resilientClient(paused.port));
      const h = heartbeat({ client, name: nextFleet(), intervalMs: 100, assumeInstances: 5 });
      expect(await h.beat()).toBe(1);
      const before = client.sent;
      paused.pause();
      await sleep(700);
      const during = client.sent - before;
      paused.resume();
      expect(during).toBeLessThanOrEqual(1);
      expect(h.stats().skipped).toBeGreaterThanOrEqual(3);
      expect(h.instances()).toBe(1);
      const beats = h.stats().beats;
      expect(await h.beat()).toBe(1);
      expect(h.stats().beats).toBeGreaterThan(beats);
    } finally {
      await paused.stop();
    }
  });

  it('SCRIPT FLUSH: the next beat reloads the script and counts', async () => {
    const h = heartbeat({ client: await resilientClient(server.port), name: nextFleet(), intervalMs: 60_000 });
    await h.beat();
    await admin.script('FLUSH');
    expect(await h.beat()).toBe(1);
    expect(h.stats().failures).toBe(0);
  });

  it('invalid options throw ConfigError', () => {
    const client = server.connect();
    expect(() => createHeartbeat({ client, intervalMs: 50 })).toThrow(ConfigError);
    expect(() => createHeartbeat({ client, intervalMs: 1000, ttlMs: 1000 })).toThrow(ConfigError);
    expect(() => createHeartbeat({ client, name: '' })).toThrow(ConfigError);
    expect(() => createHeartbeat({ client, assumeInstances: 0 })).toThrow(ConfigError);
    expect(() => createHeartbeat({ client: {} })).toThrow(ConfigError);
  });
});

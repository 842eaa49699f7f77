import { randomInt } from 'node:crypto';
import type { Cluster } from 'ioredis';
import { beforeAll, describe, expect, it } from 'vitest';
import { type Charge, chargeAll } from '../../src/http/nested.js';
import { createLeasedLimiter, gcra } from '../../src/index.js';
import { createHeartbeat, createRedisLimiter, keySlot } from '../../src/stores/redis/index.js';
import { manualClock, runConformance } from '../../src/testing/index.js';
import type { TestCluster } from '../support/cluster.js';
import { held } from '../support/held-keys.js';
import { leaseRefundTrails } from '../support/lease-exemptions.js';

/**
 * Registers the conformance suite for a leased limiter with leases of one unit (so it must decide
 * exactly as its remote does) over a batched Redis limiter on `clients()` (Cluster connections
 * 0..3, read once the file's `beforeAll` has opened them), keys held (see held-keys.ts). Shared by
 * the Redis and Valkey cluster files.
 */
export function runLeasedConformance(name: string, clients: () => readonly unknown[]): void {
  runConformance({
    name,
    test: { describe, it },
    algorithms: ['gcra', 'token-bucket', 'fixed-window'],
    capabilities: ['partial'],
    exempt: {
      ...leaseRefundTrails,
      invalidations: 'no subscriber connection on this target (test/admin/fleet.test.ts holds them on a Cluster)',
    },
    create: (algorithm, clock, connection) =>
      createLeasedLimiter({
        remote: createRedisLimiter({
          client: held(clients()[connection]),
          algorithm,
          prefix: `leased:${algorithm.name}:`,
          clock: clock.now,
          // held() hides that the client is a Cluster client.
          batch: { bySlot: true },
        }),
        leaseSize: 1,
        clock: clock.now,
        onWarning: false, // no subscriber here, on purpose (see the exemption above)
      }),
  });
}

/**
 * Registers leasing, nested limits and the heartbeat registry on `cluster()` (read once the
 * file's `beforeAll` has started it), through 4 ioredis Cluster clients of its own. Shared by
 * the Redis and Valkey cluster files.
 */
export function describeLeasingNestedLimitsAndHeartbeat(title: string, cluster: () => TestCluster): void {
  describe(`${title}: leasing, nested limits and the heartbeat registry`, () => {
    let clients: Cluster[];
    // Disconnected by the cluster's stop().
    beforeAll(() => {
      clients = [0, 1, 2, 3].map(() => cluster().connect());
    });

    it('leases of 10 over a Cluster remote admit exactly the limit across 4 instances, and give unspent units back', async () => {
      const clock = manualClock();
      const algorithm = gcra({ limit: 100, periodMs: 60_000 });
      const prefix = 'leased:';
      const instances = clients.map((client) =>
        createLeasedLimiter({
          remote: createRedisLimiter({ client, algorithm, prefix, clock: clock.now }),
          leaseSize: 10,
          clock: clock.now,
          onWarning: false, // nothing is reset or blocked: no subscriber needed
        }),
      );
      const decisions = await Promise.all(
        Array.from({ length: 400 }, (_, i) => (instances[i % 4] as (typeof instances)[number]).limit('k')),
      );
      expect(decisions.filter((d) => d.allowed)).toHaveLength(100);
      await Promise.all(instances.map((instance) => instance.close()));
    });

    it('charges nested GCRA limits on keys in different slots all or nothing (refund on the per-key denial)', async () => {
      const clock = manualClock();
      const limiter = (limit: number, prefix: string) =>
        createRedisLimiter({
          client: clients[0],
          algorithm: gcra({ limit, periodMs: 60_000 }),
          prefix,
          clock: clock.now,
        });
      const perIp = limiter(10, 'nested-ip:');
      const perKey = limiter(3, 'nested-key:');
      expect(keySlot('nested-ip:{203.0.113.9}')).not.toBe(keySlot('nested-key:{api-key-1}'));
      const charges: Charge[] = [
        { name: 'per-ip', limiter: perIp, key: '203.0.113.9', cost: 1 },
        { name: 'per-key', limiter: perKey, key: 'api-key-1', cost: 1 },
      ];
      const fail = () => {
        throw new Error('no refund should fail');
      };
      for (let i = 0; i < 3; i++) expect((await chargeAll(charges, fail)).allowed).toBe(true);
      const fourth = await chargeAll(charges, fail);
      expect(fourth).toMatchObject({ allowed: false, strategy: 'refund' });
      expect((await perIp.peek('203.0.113.9')).remaining).toBe(7);
    });

    it('counts live instances in one registry key: 3 heartbeats see 3, then 2 after one leaves', async () => {
      const name = `cluster-${randomInt(1e9)}`;
      const beats = [0, 1, 2].map((i) => createHeartbeat({ client: clients[i], name, intervalMs: 60_000 }));
      await Promise.all(beats.map((beat) => beat.beat()));
      expect(await Promise.all(beats.map((beat) => beat.beat()))).toEqual([3, 3, 3]);
      await beats[2]?.close();
      expect(await beats[0]?.beat()).toBe(2);
      await Promise.all(beats.map((beat) => beat.close()));
    });
  });
}

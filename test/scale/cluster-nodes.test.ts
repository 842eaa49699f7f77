import { randomInt } from 'node:crypto';
import { once } from 'node:events';
import fc from 'fast-check';
import type { Cluster } from 'ioredis';
import type { Cluster as ValkeyCluster } from 'iovalkey';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Decision, gcra, type Limiter } from '../../src/index.js';
import { createRedisLimiter, keySlot } from '../../src/stores/redis/index.js';
import { perNodeScript } from '../../src/stores/redis/scripts/compose.js';
import { gcraScript } from '../../src/stores/redis/scripts/gcra.js';
import { scripts } from '../../src/stores/redis/scripts/index.js';
import { manualClock, profiles } from '../../src/testing/index.js';
import { type ClusterNode, startCluster, type TestCluster } from '../support/cluster.js';
import type { ServerKind } from '../support/redis-server.js';
import { connectNodeRedisCluster, type NodeRedisCluster } from './node-redis.js';
import { migrateUnderTraffic } from './slot-move.js';
import { errorsBetween, type ServerStats, scriptCallsBetween, serverStats } from './support.js';
import { decideTurns, scheduledRequest } from './turns.js';

/*
 * Per-master batching (`batch: { byNode: true }`) on a real 3-master cluster of redis-server 7
 * and of valkey-server 8 (the same tests): one call per master per turn, admissions exactly
 * those of one call per decision, and nothing charged twice when a slot moves under it or the
 * client's slot map is stale.
 */

for (const server of ['redis', 'valkey'] as const satisfies readonly ServerKind[]) {
  describe(`${server}-server, 3 masters`, () => {
    let cluster: TestCluster;
    let ioredis: Cluster;
    let nodeRedis: NodeRedisCluster;
    let valkey: ValkeyCluster;

    beforeAll(async () => {
      cluster = await startCluster({ masters: 3, server });
      // Every script, both variants, cached on every master: call counts see no NOSCRIPT retries.
      for (const master of cluster.masters) {
        for (const script of Object.values(scripts)) {
          await master.admin.script('LOAD', script.source);
          await master.admin.script('LOAD', perNodeScript(script).source);
        }
      }
      ioredis = cluster.connect();
      if (ioredis.status !== 'ready') await once(ioredis, 'ready');
      nodeRedis = await connectNodeRedisCluster(cluster);
      valkey = cluster.connectValkey();
      if (valkey.status !== 'ready') await once(valkey, 'ready');
    });

    afterAll(async () => {
      await nodeRedis?.close();
      await cluster?.stop();
    });

    let prefixes = 0;
    const prefix = (name: string) => `${name}${++prefixes}:`;
    const stored = (keyPrefix: string, id: string) => `${keyPrefix}{${id}}`;

    /** Slot → the master serving it, read once from the cluster. */
    async function slotOwners(): Promise<(slot: number) => ClusterNode> {
      const ranges = await (cluster.masters[0] as ClusterNode).admin.cluster('SLOTS');
      return (slot) => {
        const range = ranges.find(([from, to]) => slot >= from && slot <= to);
        const owner = cluster.masters.find((master) => master.id === range?.[2]?.[2]);
        if (!owner) throw new Error(`no owner for slot ${slot}`);
        return owner;
      };
    }

    /**
     * A slot no earlier test left keys in, so a migration moves only the keys a test puts
     * there and moves them in the order the test expects.
     */
    async function emptySlot(owner: (slot: number) => ClusterNode): Promise<number> {
      for (;;) {
        const slot = randomInt(16384);
        if ((await owner(slot).admin.call('CLUSTER', 'COUNTKEYSINSLOT', slot)) === 0) return slot;
      }
    }

    describe('Redis Cluster: what the server and the clients do with keys of several slots', () => {
      it('refuses declared KEYS of two slots on one master with CROSSSLOT, flags or not; accepts them in ARGV with the flag', async () => {
        const owner = await slotOwners();
        const master = owner(keySlot('a'));
        const other = ['e', 'h', 'x', 'y', 'z', 'q'].find(
          (key) => owner(keySlot(key)) === master && keySlot(key) !== keySlot('a'),
        );
        if (other === undefined) throw new Error('no second key on the master of "a"');
        const flagged = `#!lua flags=allow-cross-slot-keys\nreturn redis.call('SET', ARGV[1], 'v')`;
        await expect(master.admin.eval(flagged, 2, 'a', other, other)).rejects.toThrow(/^CROSSSLOT /);
        await expect(master.admin.eval(flagged, 1, 'a', other)).resolves.toBe('OK');
        await master.admin.del(other);
        // Through a Cluster client, too: both send it (routed by the first key), the server refuses.
        await expect(ioredis.eval(flagged, 2, 'a', other, other)).rejects.toThrow(/^CROSSSLOT /);
        await expect(nodeRedis.eval(flagged, { keys: ['a', other], arguments: [other] })).rejects.toThrow(
          /^CROSSSLOT /,
        );
      });

      it('the per-node script writes nothing when one key is not served where it runs, and says so', async () => {
        const owner = await slotOwners();
        const master = cluster.masters[0] as ClusterNode;
        const local = Array.from({ length: 200 }, (_, i) => `local-${i}`).filter(
          (key) => owner(keySlot(key)) === master,
        );
        const foreign = Array.from({ length: 50 }, (_, i) => `foreign-${i}`).find(
          (key) => owner(keySlot(key)) !== master,
        );
        if (local.length < 5 || foreign === undefined) throw new Error('keys not spread as expected');
        const keys = [...local.slice(0, 4), foreign, local[4] as string];
        const { source } = perNodeScript(gcraScript);
        const args = ['', 1_000_000, 10, ...keys.flatMap((key) => [key, 1]), keys.length];
        const reply = (await master.admin.eval(source, 1, keys[0] as string, ...args)) as unknown[];
        expect(reply[0]).toBe('not-local');
        expect(String(reply[1])).toMatch(/non local key/);
        for (const key of local.slice(0, 5)) expect(await master.admin.exists(key), key).toBe(0);
      });
    });

    describe('Redis Cluster: per-master batching', () => {
      it('is refused for a client without a slot map, and with bySlot false', () => {
        const algorithm = gcra({ limit: 3, periodMs: 60_000 });
        const scriptClient = { evalsha: async () => [], eval: async () => [] };
        for (const [client, batch] of [
          [scriptClient, { byNode: true }],
          [ioredis, { byNode: 'yes' }],
          [ioredis, { byNode: true, bySlot: false }],
        ] as const) {
          expect(() => createRedisLimiter({ client, algorithm, batch: batch as never }), JSON.stringify(batch)).toThrow(
            expect.objectContaining({ code: 'ERR_SLUICE_CONFIG' }),
          );
        }
      });

      it('sends 1,000 decisions over 1,000 keys in one turn as ⌈keys on a master / 64⌉ (the default maxDecisions) calls per master, admitting as unbatched', async () => {
        const owner = await slotOwners();
        const ids = Array.from({ length: 1000 }, (_, i) => `k${i}`);
        const algorithm = gcra({ limit: 3, periodMs: 60_000 });
        for (const [name, client] of [
          ['ioredis', () => ioredis],
          ['node-redis', () => nodeRedis],
          ['iovalkey', () => valkey],
        ] as const) {
          const clock = manualClock();
          const plainPrefix = prefix(`plain-${name}`);
          const plain = createRedisLimiter({ client: client(), algorithm, prefix: plainPrefix, clock: clock.now });
          const nodePrefix = prefix(`node-${name}`);
          const byNode = createRedisLimiter({
            client: client(),
            algorithm,
            prefix: nodePrefix,
            clock: clock.now,
            batch: { byNode: true },
          });
          const cost = (i: number) => 1 + (i % 4);
          const expected = await Promise.all(ids.map((id, i) => plain.limit(id, { cost: cost(i) })));
          const before = await Promise.all(cluster.masters.map((master) => serverStats([master.admin])));
          const actual = await Promise.all(ids.map((id, i) => byNode.limit(id, { cost: cost(i) })));
          const after = await Promise.all(cluster.masters.map((master) => serverStats([master.admin])));
          expect(actual).toEqual(expected);
          expect(actual.filter((d) => d.allowed)).toHaveLength(750);
          const calls = cluster.masters.map((_, m) =>
            scriptCallsBetween(before[m] as ServerStats, after[m] as ServerStats),
          );
          const keysPerMaster = cluster.masters.map(
            (master) => ids.filter((id) => owner(keySlot(stored(nodePrefix, id))) === master).length,
          );
          expect(calls, `${name}: keys per master ${keysPerMaster}`).toEqual(
            keysPerMaster.map((n) => Math.ceil(n / 64)),
          );
          await byNode.close();
        }
      });

      it('over maxmemory, where a script with flags is refused whole, still answers denials (per slot)', async () => {
        const owner = await slotOwners();
        const master = cluster.masters[1] as ClusterNode;
        const keyPrefix = prefix('oom');
        const ids = Array.from({ length: 300 }, (_, i) => `o${i}`).filter(
          (id) => owner(keySlot(stored(keyPrefix, id))) === master,
        );
        const limiter = createRedisLimiter({
          client: ioredis,
          algorithm: gcra({ limit: 1, periodMs: 3_600_000 }),
          prefix: keyPrefix,
          clock: manualClock().now,
          batch: { byNode: true },
        });
        expect((await Promise.all(ids.map((id) => limiter.limit(id)))).every((d) => d.allowed)).toBe(true);
        await master.admin.config('SET', 'maxmemory', '1');
        try {
          const denied = await Promise.all(ids.map((id) => limiter.limit(id)));
          expect(denied.map((d) => d.allowed)).toEqual(ids.map(() => false));
        } finally {
          await master.admin.config('SET', 'maxmemory', '0');
        }
      });

      it('sends the same turn per slot as one call per slot (what byNode saves)', async () => {
        const ids = Array.from({ length: 1000 }, (_, i) => `k${i}`);
        const keyPrefix = prefix('slot');
        const limiter = createRedisLimiter({
          client: ioredis,
          algorithm: gcra({ limit: 3, periodMs: 60_000 }),
          prefix: keyPrefix,
          batch: true,
        });
        const before = await serverStats(cluster.masters.map((master) => master.admin));
        await Promise.all(ids.map((id) => limiter.limit(id)));
        const slots = new Set(ids.map((id) => keySlot(stored(keyPrefix, id)))).size;
        expect(scriptCallsBetween(before, await serverStats(cluster.masters.map((master) => master.admin)))).toBe(
          slots,
        );
      });

      // 24 keys: spread over the three masters, several per master in most turns.
      const request = scheduledRequest(Array.from({ length: 24 }, (_, n) => `r${n}`));

      for (const profile of profiles) {
        it(`${profile.name}: turns of concurrent requests decide exactly as one awaited call per request`, async () => {
          await fc.assert(
            fc.asyncProperty(
              fc.array(fc.array(request, { minLength: 1, maxLength: 40 }), { minLength: 1, maxLength: 6 }),
              fc.constantFrom('ioredis', 'node-redis'),
              async (turns, clientName) => {
                const client = clientName === 'ioredis' ? ioredis : nodeRedis;
                const algorithm = profile.build(6, 10_000);
                const { expected, actual } = await decideTurns(
                  turns,
                  (clock) => createRedisLimiter({ client, algorithm, clock: clock.now, prefix: prefix('diff') }),
                  (clock) =>
                    createRedisLimiter({
                      client,
                      algorithm,
                      clock: clock.now,
                      prefix: prefix('diff'),
                      batch: { byNode: true, maxDecisions: 9 },
                    }),
                );
                expect(actual).toEqual(expected);
              },
            ),
            { numRuns: 20 },
          );
        });
      }
    });

    /** `count` identifiers whose keys under `keyPrefix` fall in `slot`, or (slot undefined) on `master` outside `except`. */
    function idsWhere(keyPrefix: string, count: number, where: (slot: number) => boolean, tag: string): string[] {
      const ids: string[] = [];
      for (let n = 0; ids.length < count; n++)
        if (where(keySlot(stored(keyPrefix, `${tag}${n}`)))) ids.push(`${tag}${n}`);
      return ids;
    }

    describe('Redis Cluster: per-master batching while slots move', () => {
      const BURST = 1000;

      for (const [label, clientOf] of [
        ['ioredis Cluster', () => ioredis],
        ['node-redis createCluster', () => nodeRedis],
      ] as const) {
        it(`${label}: a slot migrated mid-run; every admission is charged exactly once`, async () => {
          const keyPrefix = prefix('move');
          const owner = await slotOwners();
          const slot = await emptySlot(owner);
          const from = owner(slot);
          const to = cluster.masters.find((master) => master !== from) as ClusterNode;
          // Keys of the moving slot, and keys of other slots on the same master: per-master calls mix them.
          const ids = [
            ...idsWhere(keyPrefix, 12, (s) => s === slot, 'm'),
            ...idsWhere(keyPrefix, 12, (s) => s !== slot && owner(s) === from, 'o'),
          ];
          const clock = manualClock();
          const algorithm = gcra({ limit: BURST, periodMs: 3_600_000 });
          // Three batchers: one sees only keys of the moving slot, one only the other keys, one both.
          const limiters = [0, 1, 2].map(() =>
            createRedisLimiter({
              client: clientOf(),
              algorithm,
              prefix: keyPrefix,
              clock: clock.now,
              batch: { byNode: true },
            }),
          );
          const admitted = new Map(ids.map((id) => [id, 0]));
          const decide = async (i: number) => {
            const id = ids[i % ids.length] as string;
            const cost = 1 + (i % 3);
            const which = i % 3 === 0 ? 2 : id.startsWith('m') ? 0 : 1;
            const decision = await (limiters[which] as Limiter).limit(id, { cost });
            if (decision.allowed) admitted.set(id, (admitted.get(id) ?? 0) + cost);
          };
          await Promise.all(ids.map((_, i) => decide(i)));

          const before = await serverStats(cluster.masters.map((master) => master.admin));
          // MIGRATE without REPLACE: a key the importing node had charged as fresh would fail the move (BUSYKEY).
          await migrateUnderTraffic(cluster.migrateSlot, slot, to, decide, { from: ids.length, width: 12 });
          const after = await serverStats(cluster.masters.map((master) => master.admin));

          expect(errorsBetween(before, after, 'ASK'), 'calls sent again per slot followed ASK').toBeGreaterThan(0);
          expect(errorsBetween(before, after, 'CROSSSLOT')).toBe(0);
          for (const id of ids) {
            const spent = admitted.get(id) ?? 0;
            expect(spent, id).toBeGreaterThan(0);
            expect(spent, id).toBeLessThan(BURST);
            const home = id.startsWith('m') ? to : from;
            expect(await home.admin.exists(stored(keyPrefix, id)), `${id} on ${home.port}`).toBe(1);
            const rest = await (limiters[0] as Limiter).limit(id, { cost: BURST - spent });
            expect(rest.allowed, `${id}: ${BURST - spent} left after ${spent}`).toBe(true);
            expect((await (limiters[0] as Limiter).limit(id)).allowed, `${id} exhausted`).toBe(false);
          }
        });

        it(`${label}: a call whose first key already moved is sent again per slot, never run after ASKING`, async () => {
          // On the importing node after ASKING, a key still on the migrating node looks absent,
          // hence fresh: a per-master call that followed ASK there would charge it a second time.
          const keyPrefix = prefix('ask');
          const owner = await slotOwners();
          const slot = await emptySlot(owner);
          const from = owner(slot);
          const to = cluster.masters.find((master) => master !== from) as ClusterNode;
          const ids = idsWhere(keyPrefix, 6, (s) => s === slot, 'm');
          const limit = 10;
          const limiter = createRedisLimiter({
            client: clientOf(),
            algorithm: gcra({ limit, periodMs: 3_600_000 }),
            prefix: keyPrefix,
            clock: manualClock().now,
            batch: { byNode: true },
          });
          await Promise.all(ids.map((id) => limiter.limit(id)));
          let keysMoved = 0;
          let turn: Decision[] = [];
          await cluster.migrateSlot(slot, to, async () => {
            if (keysMoved++ !== 1) return;
            // One key has moved: put it first in a turn of all six.
            const here = await Promise.all(ids.map((id) => from.admin.exists(stored(keyPrefix, id)).catch(() => 0)));
            const first = ids.filter((_, i) => here[i] === 0);
            expect(first).toHaveLength(1);
            const order = [...first, ...ids.filter((_, i) => here[i] === 1)];
            turn = await Promise.all(order.map((id) => limiter.limit(id, { cost: 2 })));
          });
          expect(turn.map((d) => [d.allowed, d.remaining])).toEqual(ids.map(() => [true, limit - 3]));
          for (const id of ids) expect((await limiter.peek(id)).remaining, id).toBe(limit - 3);
          await limiter.close();
        });

        it(`${label}: a stale slot map falls back per slot and charges nothing twice`, async () => {
          const keyPrefix = prefix('stale');
          // A client that learns of the move only from a redirection (no periodic refresh).
          const stale = await staleClient(label);
          const owner = await slotOwners();
          const slot = await emptySlot(owner);
          const from = owner(slot);
          const to = cluster.masters.find((master) => master !== from) as ClusterNode;
          const moved = idsWhere(keyPrefix, 6, (s) => s === slot, 'm');
          const staying = idsWhere(keyPrefix, 6, (s) => s !== slot && owner(s) === from, 's');
          // Moved keys in the middle of each call: the first key is served, so only the pre-pass can tell.
          const ids = [...staying.slice(0, 3), ...moved, ...staying.slice(3)];
          const limit = 10;
          const limiter = createRedisLimiter({
            client: stale.client,
            algorithm: gcra({ limit, periodMs: 3_600_000 }),
            prefix: keyPrefix,
            clock: manualClock().now,
            batch: { byNode: true },
          });
          const first = await Promise.all(ids.map((id) => limiter.limit(id)));
          expect(first.map((d) => d.remaining)).toEqual(ids.map(() => limit - 1));

          await cluster.migrateSlot(slot, to);
          const before = await serverStats(cluster.masters.map((master) => master.admin));
          const second = await Promise.all(ids.map((id) => limiter.limit(id, { cost: 2 })));
          const after = await serverStats(cluster.masters.map((master) => master.admin));
          expect(second.map((d) => [d.allowed, d.remaining])).toEqual(ids.map(() => [true, limit - 3]));
          expect(errorsBetween(before, after, 'MOVED'), 'the per-slot calls were redirected').toBeGreaterThan(0);
          for (const id of ids) {
            const home = moved.includes(id) ? to : from;
            expect(await home.admin.exists(stored(keyPrefix, id)), `${id} on ${home.port}`).toBe(1);
            expect((await limiter.peek(id)).remaining, id).toBe(limit - 3);
          }
          await limiter.close();
          await stale.close();
        });
      }
    });

    /** A new Cluster client that learns of a moved slot only from a redirection (no periodic refresh). */
    async function staleClient(label: string): Promise<{ client: unknown; close(): Promise<void> }> {
      if (label === 'ioredis Cluster') {
        const client = cluster.connect({ slotsRefreshInterval: 3_600_000 });
        if (client.status !== 'ready') await once(client, 'ready');
        return { client, close: async () => client.disconnect() };
      }
      // node-redis refreshes its slot map only on a redirection.
      const client = await connectNodeRedisCluster(cluster);
      return { client, close: () => client.close() };
    }
  });
}

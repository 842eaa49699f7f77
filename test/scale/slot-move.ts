import { randomInt } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { gcra } from '../../src/index.js';
import { createRedisLimiter, keySlot } from '../../src/stores/redis/index.js';
import { manualClock } from '../../src/testing/index.js';
import type { ClusterNode, TestCluster } from '../support/cluster.js';
import { errorsBetween, serverStats } from './support.js';

/** One Cluster client kind whose limiters, plain and batched, take turns through the move. */
export interface SlotMoveTarget {
  /** Shown in the test name; its first word names the key prefix. */
  name: string;
  /** Connections of this client kind; read in the test, once the file's `beforeAll` has opened them. */
  clients: () => readonly unknown[];
}

const BURST = 1000;

/** Identifiers whose keys under `prefix` all hash to `slot`. */
function idsInSlot(prefix: string, slot: number, count: number): string[] {
  const ids: string[] = [];
  for (let n = 0; ids.length < count; n++) if (keySlot(`${prefix}{m${n}}`) === slot) ids.push(`m${n}`);
  return ids;
}

/**
 * Registers, per target, a random slot moved to another master of `cluster()` (read in the test,
 * once the file's `beforeAll` has started it) while that target's limiters keep deciding keys in
 * it: every admission is charged exactly once through IMPORTING/MIGRATING, ASK, TRYAGAIN and
 * MOVED. Shared by the Redis and Valkey cluster files.
 */
export function describeSlotMoveDuringRun(
  title: string,
  cluster: () => TestCluster,
  targets: readonly SlotMoveTarget[],
): void {
  describe(`${title}: a slot moves during a run`, () => {
    for (const { name, clients } of targets) {
      it(`${name}, plain and batched: every admission is charged exactly once through IMPORTING/MIGRATING, ASK, TRYAGAIN and MOVED`, async () => {
        const { masters, ownerOf, migrateSlot } = cluster();
        const masterStats = () => serverStats(masters.map((master) => master.admin));
        const prefix = `move:${name.split(' ')[0]}:`;
        const slot = randomInt(16384);
        const ids = idsInSlot(prefix, slot, 12);
        const clock = manualClock();
        const algorithm = gcra({ limit: BURST, periodMs: 3_600_000 });
        const limiters = clients().flatMap((client) =>
          [false, true].map((batch) => createRedisLimiter({ client, algorithm, prefix, clock: clock.now, batch })),
        );
        const admitted = new Map(ids.map((id) => [id, 0]));
        const decide = async (i: number) => {
          const id = ids[i % ids.length] as string;
          const cost = 1 + (i % 3);
          const decision = await (limiters[i % limiters.length] as (typeof limiters)[number]).limit(id, { cost });
          if (decision.allowed) admitted.set(id, (admitted.get(id) ?? 0) + cost);
        };
        // Every key exists on the source before the move starts.
        await Promise.all(ids.map((_, i) => decide(i)));

        const from = await ownerOf(slot);
        const to = masters.find((master) => master !== from);
        if (!to) throw new Error('need two masters');
        const before = await masterStats();
        await migrateUnderTraffic(migrateSlot, slot, to, decide, { from: ids.length, width: 6 });
        const after = await masterStats();

        expect((await ownerOf(slot)).id).toBe(to.id);
        expect(errorsBetween(before, after, 'ASK'), 'decisions followed ASK to the importing node').toBeGreaterThan(0);
        expect(errorsBetween(before, after, 'MOVED'), 'and MOVED once the slot was moved').toBeGreaterThan(0);
        expect(errorsBetween(before, after, 'TRYAGAIN'), 'batched calls met a half-moved slot').toBeGreaterThan(0);
        expect(after.errors.get('CROSSSLOT') ?? 0).toBe(0);
        const first = limiters[0] as (typeof limiters)[number];
        for (const id of ids) {
          const spent = admitted.get(id) ?? 0;
          expect(spent, id).toBeLessThan(BURST);
          expect(await to.admin.exists(`${prefix}{${id}}`), `${id} moved`).toBe(1);
          // Exactly what clients were told was admitted is charged: the rest is still there, and no more.
          const rest = await first.limit(id, { cost: BURST - spent });
          expect(rest.allowed, `${id}: ${BURST - spent} left after ${spent}`).toBe(true);
          expect((await first.limit(id)).allowed, `${id} exhausted`).toBe(false);
        }
      });
    }
  });
}

/**
 * Moves `slot` to `to` (`TestCluster.migrateSlot`) under traffic: 8 workers keep `width`
 * decisions each in flight, calling `decide` with `from`, `from + 1`, …; 100 decisions settle
 * between every two keys MIGRATE moves and after the last. Resolves once the workers stopped.
 */
export async function migrateUnderTraffic(
  migrateSlot: TestCluster['migrateSlot'],
  slot: number,
  to: ClusterNode,
  decide: (sequence: number) => Promise<void>,
  { from, width }: { from: number; width: number },
): Promise<void> {
  let running = true;
  let sequence = from;
  let settled = 0;
  const workers = Array.from({ length: 8 }, async () => {
    while (running) {
      await Promise.all(Array.from({ length: width }, () => decide(sequence++).then(() => settled++)));
    }
  });
  const waitForTraffic = async () => {
    const target = settled + 100;
    while (settled < target) await new Promise((resolve) => setImmediate(resolve));
  };
  await migrateSlot(slot, to, waitForTraffic);
  await waitForTraffic();
  running = false;
  await Promise.all(workers);
}

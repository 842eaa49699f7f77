import { once } from 'node:events';
import { expect } from 'vitest';
import { gcra, type Limiter } from '../../src/index.js';
import { createRedisLimiter } from '../../src/stores/redis/index.js';
import { gcraScript } from '../../src/stores/redis/scripts/gcra.js';
import type { DataNode, TestSentinel } from '../support/sentinel.js';
import { errorsBetween, serverStats } from './support.js';

/** One client's stream of one-shot decisions: every key is fresh, so every decision should admit. */
interface Run {
  name: string;
  limiter: Limiter;
  admitted: { id: string; sentAt: number; doneAt: number }[];
  denied: string[];
  errors: number;
}

/**
 * Runs one-shot decisions through each named client (two workers each) across one
 * `SENTINEL FAILOVER` of `setup`, until every client has had 300 admissions after the old master
 * was demoted. Asserts, per client: the promoted replica answered NOSCRIPT (EVALSHA → EVAL), no
 * fresh key was denied, and every lost write (a key admitted twice) was sent between the failover
 * command and the demotion. Prints the timings and a table; returns lost writes by client name.
 * The caller closes the clients.
 */
export async function runThroughFailover(
  setup: TestSentinel,
  clients: readonly (readonly [string, unknown])[],
): Promise<Map<string, number>> {
  // One unit per hour per key: a key admitted twice had its first write lost.
  const algorithm = gcra({ limit: 1, periodMs: 3_600_000 });
  const runs: Run[] = clients.map(([name, client]) => ({
    name,
    limiter: createRedisLimiter({ client, algorithm, prefix: `failover:${name}:` }),
    admitted: [],
    denied: [],
    errors: 0,
  }));
  const t0 = performance.now();
  const now = () => performance.now() - t0;
  let running = true;
  let sequence = 0;
  const workers = runs.flatMap((run) =>
    [0, 1].map(async () => {
      while (running) {
        const id = String(sequence++);
        const sentAt = now();
        try {
          const decision = await run.limiter.limit(id);
          if (decision.allowed) run.admitted.push({ id, sentAt, doneAt: now() });
          else run.denied.push(id);
        } catch {
          run.errors++;
          await new Promise((resolve) => setTimeout(resolve, 1));
        }
      }
    }),
  );
  const admittedSince = (from: number) => (run: Run) => run.admitted.filter((a) => a.sentAt > from).length;
  const progress = async (from: number, count: number) => {
    while (!runs.every((run) => admittedSince(from)(run) >= count)) await new Promise((r) => setTimeout(r, 10));
  };

  await progress(0, 300);
  const oldMaster = await setup.master();
  const replica = setup.nodes.find((node) => node !== oldMaster) as DataNode;
  expect(await replica.admin.script('EXISTS', gcraScript.sha), 'the replica has no cached script').toEqual([0]);
  const before = await serverStats([replica.admin]);
  const failoverAt = now();
  const { from, to } = await setup.failover();
  const promotedAt = now();
  expect(from).toBe(oldMaster);
  expect(to).toBe(replica);
  await setup.demoted(from);
  const demotedAt = now();
  await progress(demotedAt, 300);
  running = false;
  await Promise.all(workers);
  expect(errorsBetween(before, await serverStats([to.admin]), 'NOSCRIPT'), 'EVALSHA → NOSCRIPT → EVAL').toBeGreaterThan(
    0,
  );

  const checker = setup.connect();
  if (checker.status !== 'ready') await once(checker, 'ready');
  const summary = [];
  for (const run of runs) {
    const recheck = createRedisLimiter({ client: checker, algorithm, prefix: `failover:${run.name}:`, batch: true });
    const again = await Promise.all(run.admitted.map((a) => recheck.limit(a.id)));
    const lost = run.admitted.filter((_, i) => again[i]?.allowed);
    expect(run.denied, `${run.name}: a fresh key is never denied`).toEqual([]);
    for (const { id, sentAt, doneAt } of lost) {
      expect(doneAt, `${run.name}: key ${id} lost only once the failover started`).toBeGreaterThanOrEqual(failoverAt);
      expect(sentAt, `${run.name}: key ${id} lost only before the old master was demoted`).toBeLessThanOrEqual(
        demotedAt,
      );
    }
    const during = run.admitted.filter((a) => a.sentAt >= failoverAt && a.sentAt <= demotedAt).length;
    summary.push({
      client: run.name,
      admitted: run.admitted.length,
      errors: run.errors,
      'admitted during failover': during,
      'lost = admitted twice': lost.length,
      'lost window ms': lost.length === 0 ? 0 : Math.round((lost.at(-1)?.sentAt ?? 0) - (lost[0]?.sentAt ?? 0)),
    });
  }
  console.info(
    `failover: SENTINEL FAILOVER at ${Math.round(failoverAt)} ms, replica promoted and named by every sentinel ` +
      `${Math.round(promotedAt - failoverAt)} ms later, old master demoted ${Math.round(demotedAt - failoverAt)} ms later`,
  );
  console.table(summary);
  return new Map(summary.map((row) => [row.client, row['lost = admitted twice']]));
}

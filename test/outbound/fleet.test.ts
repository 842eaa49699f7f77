import { type ChildProcess, fork } from 'node:child_process';
import { once } from 'node:events';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readCommandStats, roundTripsBetween } from '../../bench/lib/commandstats.mjs';
import { type Compiled, compile } from '../fleet/compile.js';
import { type RedisServer, startRedis } from '../support/redis-server.js';
import type { CallerConfig, CallerReport } from './support/caller.js';
import { maxInWindow, tightestSpan } from './support/counting.js';
import { type FakeUpstream, startFakeUpstream } from './support/upstream.js';

/*
 * The proof, in its own shape: a real HTTP server stands in for the third-party API and
 * enforces 10 requests per rolling second itself (answering 429 beyond), and 3 forked processes
 * sharing one Redis key each push 200 calls through `throttle`, 50 waiting at a time. Sluice is
 * configured at 9.6/s (48 per 5 s), paced: 11 calls then span 1,042 ms, so 42 ms of jitter
 * between a release and its arrival is absorbed, of which `maxLatenessMs` gives Sluice 10 and
 * leaves 32 to the network and the upstream's own event loop.
 */
const UPSTREAM_LIMIT = 10;
const WINDOW_MS = 1000;
const PROCESSES = 3;

let compiled: Compiled;
let server: RedisServer;
let admin: Redis;
let runs = 0;

beforeAll(async () => {
  [compiled, server] = await Promise.all([compile({ caller: 'test/outbound/support/caller.ts' }), startRedis()]);
  admin = server.connect();
});
afterAll(async () => {
  compiled?.remove();
  await server?.stop();
});

interface FleetFigures {
  served: number;
  refused: number;
  /** Most requests that arrived (served or refused) in any rolling second, by the upstream's clock. */
  maxPerWindow: number;
  /** The same, by the callers' send times: what Sluice controls, before scheduling and network jitter. */
  maxSentPerWindow: number;
  /**
   * Shortest time (ms) from an arrival to the `upstreamLimit`-th after it: under the window
   * (1,000 ms) means a window held one more than the limit. The margin left against jitter.
   */
  tightestSpanMs: number;
  /** Served per second over the run (first to last arrival), as a share of the upstream's limit. */
  throughputShare: number;
  /** Redis script calls (decisions, pause reads and writes) per call that reached the upstream. */
  redisCallsPerCall: number;
  /** Calls the processes reported per status, summed. */
  statuses: Record<string, number>;
}

async function runFleet(
  upstream: FakeUpstream,
  upstreamLimit: number,
  caller: Omit<CallerConfig, 'redisPort' | 'upstreamUrl' | 'prefix'>,
): Promise<FleetFigures> {
  upstream.clear();
  const config: CallerConfig = {
    ...caller,
    redisPort: server.port,
    upstreamUrl: upstream.url,
    prefix: `outbound:${++runs}:`,
  };
  const children: ChildProcess[] = [];
  for (let i = 0; i < PROCESSES; i++) {
    children.push(fork(compiled.path('caller'), [JSON.stringify(config)], { stdio: 'inherit' }));
  }
  try {
    await Promise.all(children.map((child) => once(child, 'message')));
    const before = await readCommandStats(admin);
    const reports = children.map((child) => once(child, 'message').then(([report]) => report as CallerReport));
    for (const child of children) child.send('go');
    const done = await Promise.all(reports);
    const after = await readCommandStats(admin);
    const { served, refused } = upstream.log;
    const spanMs = (served.at(-1) as number) - (served[0] as number);
    const statuses: Record<string, number> = {};
    for (const report of done) {
      for (const [status, count] of Object.entries(report.statuses)) statuses[status] = (statuses[status] ?? 0) + count;
    }
    return {
      served: served.length,
      refused,
      maxPerWindow: maxInWindow([...served, ...upstream.log.refusedAt], WINDOW_MS),
      maxSentPerWindow: maxInWindow(upstream.log.sent, WINDOW_MS),
      tightestSpanMs: Math.round(tightestSpan([...served, ...upstream.log.refusedAt], upstreamLimit)),
      throughputShare: (served.length - 1) / spanMs / (upstreamLimit / WINDOW_MS),
      redisCallsPerCall: roundTripsBetween(before, after) / (served.length + refused),
      statuses,
    };
  } finally {
    for (const child of children) child.kill('SIGKILL');
  }
}

/** The figures of each run, printed at the end for docs/outbound.md. */
const table: Record<string, FleetFigures> = {};
afterAll(() => console.table(table));

const CALLS = 200;
const paced = {
  calls: CALLS,
  concurrency: 50,
  periodMs: 5000,
  algorithm: 'gcra',
  limit: 48,
  burst: 20,
  pace: true,
  maxLatenessMs: 10,
} as const;

describe('outbound fleet: 3 × 200 calls, one Redis key, a real upstream enforcing 10/s', { timeout: 180_000 }, () => {
  let upstream: FakeUpstream;
  beforeAll(async () => {
    upstream = await startFakeUpstream({ limit: UPSTREAM_LIMIT, windowMs: WINDOW_MS });
  });
  afterAll(() => upstream?.close());

  // Asserted: what Sluice controls, as counts. Sends (the callers' clocks) never more than 10 in
  // a second. At the upstream, arrivals also carry the network's and its own event loop's
  // jitter: on the loaded 2-core development machine that compressed 11 sends by up to 70 ms,
  // past the 42 ms margin, in some runs. So 429s are bounded by one per instance (each pauses
  // the fleet). Redis calls per call, arrivals per second and throughput are figures that move
  // with the machine's load (a stalled process gives its slots up and books again): printed for
  // the docs, not asserted (a loaded run measured 1.627 calls per call where a quiet one 1.2).
  it('gcra 9.6/s burst 20, pace, maxLatenessMs 10: ≤ 10 sent per second, ≤ 1 429 per instance', async () => {
    const figures = await runFleet(upstream, UPSTREAM_LIMIT, paced);
    table['gcra 9.6/s burst 20, pace, maxLatenessMs 10'] = figures;
    expect(figures.served + figures.refused).toBe(PROCESSES * CALLS);
    expect(figures.maxSentPerWindow).toBeLessThanOrEqual(UPSTREAM_LIMIT);
    expect(figures.refused).toBeLessThanOrEqual(PROCESSES);
  });
});

describe('outbound fleet: the upstream announces 5/s, lower than the 9.6/s configured', { timeout: 240_000 }, () => {
  let upstream: FakeUpstream;
  beforeAll(async () => {
    upstream = await startFakeUpstream({ limit: 5, windowMs: WINDOW_MS, announce: true });
  });
  afterAll(() => upstream?.close());

  // 9.6/s against 5/s less the 4 % margin learned rates keep (4.8/s): 2 units per call.
  it('converges to the announced limit: each call costs 2 units after the first response', async () => {
    const figures = await runFleet(upstream, 5, paced);
    table['gcra 9.6/s burst 20, pace, maxLatenessMs 10; upstream 5/s announced'] = figures;
    expect(figures.served + figures.refused).toBe(PROCESSES * CALLS);
    // The target: at most one 429 per instance before the fleet has learned.
    expect(figures.refused).toBeLessThanOrEqual(PROCESSES);
    expect(figures.maxPerWindow).toBeLessThanOrEqual(5 + PROCESSES);
  });
});

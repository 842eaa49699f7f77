import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import {
  type CommandStats,
  commandsBetween,
  readCommandStats,
  roundTripsBetween,
} from '../../bench/lib/commandstats.mjs';
import { type OwnedRedisServer, startRedisServer } from '../../bench/lib/redis-process.mjs';
import { scripts } from '../../src/stores/redis/scripts/index.js';
import { type RunningInstances, startInstances } from './instances.js';
import { driveLoad } from './load.js';
import { findLoad, loadPatterns } from './loads.js';
import { type FleetMode, findMode, fleetModes } from './modes.js';
import { type ScrapedInstance, scrapeInstance } from './scrape.js';

/** Options of {@link runFleet}. */
export interface FleetOptions {
  /** Requests sent per row, spread over the instances by each load pattern. */
  requests: number;
  /** Units per period of the one client key (GCRA, burst = limit). */
  limit: number;
  periodMs: number;
  /** Instance processes per mode. */
  instances: number;
  /**
   * Where Redis is: a server to use (`url`), or a redis-server executable (`command`) to start a
   * throwaway server with on a free loopback port. Without it, the modes that use Redis are skipped.
   */
  redis?: { url: string } | { command: string };
  /** Mode names, in row order; default every mode of {@link fleetModes}. */
  modes?: readonly string[];
  /** Load pattern names, one table each; default every pattern of {@link loadPatterns}. */
  loads?: readonly string[];
  /** The compiled instance entry; default `fleet-instance.js` beside this module (dist/). */
  instanceModule?: string | URL;
  /**
   * Instrument each instance's limiter (`sluice/otel`), serve its metrics for Prometheus on a
   * loopback port, and scrape every instance after each row's load (`--metrics`).
   */
  metrics?: boolean;
  /** Progress lines (the table is not logged). */
  log?: (line: string) => void;
}

/** One row of a table: one mode under one load, run on a fresh set of instances. */
export interface FleetRow {
  load: string;
  mode: string;
  label: string;
  /** false when the mode needs Redis and none was available. */
  ran: boolean;
  admitted: number;
  /** Requests sent to each instance, in instance order. */
  sentPerInstance: number[];
  /** Admitted per instance, in instance order. */
  admittedPerInstance: number[];
  denied: number;
  /** Requests answered neither 200 nor 429. */
  errors: number;
  /** Decision round trips the Redis server saw during the run (INFO commandstats); null without Redis. */
  redisRoundTrips: number | null;
  /** Every command Redis executed during the run, including those inside scripts; null without Redis. */
  redisCommands: number | null;
  /** Each instance's scraped metrics, in instance order; null unless run with `metrics`. */
  scraped: ScrapedInstance[] | null;
  elapsedMs: number;
}

/** What {@link runFleet} measured. */
export interface FleetReport {
  requests: number;
  limit: number;
  periodMs: number;
  instances: number;
  /** The one client key every request spends from. */
  key: string;
  redis: { url: string; version: string; startedHere: boolean } | null;
  /** The load patterns run, in table order. */
  loads: { name: string; label: string }[];
  rows: FleetRow[];
}

const KEY = 'demo-client';

/**
 * The fleet demo: for each load pattern and mode, forks `instances` HTTP servers guarded by that
 * mode's limiter, sends `requests` for one client key, and counts admissions per instance and
 * Redis round trips. Stops every process it started, whatever happens.
 */
export async function runFleet(options: FleetOptions): Promise<FleetReport> {
  const log = options.log ?? (() => {});
  const modes = (options.modes ?? fleetModes.map((mode) => mode.name)).map(findMode);
  const loads = (options.loads ?? loadPatterns.map((load) => load.name)).map(findLoad);
  const instanceModule = options.instanceModule ?? new URL('./fleet-instance.js', import.meta.url);
  const runId = randomBytes(4).toString('hex');
  const report: FleetReport = {
    requests: options.requests,
    limit: options.limit,
    periodMs: options.periodMs,
    instances: options.instances,
    key: KEY,
    redis: null,
    loads: loads.map(({ name, label }) => ({ name, label })),
    rows: [],
  };

  let server: OwnedRedisServer | undefined;
  let observer: Redis | undefined;
  let running: RunningInstances | undefined;
  try {
    const wantsRedis = options.redis !== undefined && modes.some((mode) => mode.usesRedis);
    if (wantsRedis && options.redis) {
      if ('command' in options.redis) {
        server = await startRedisServer(options.redis.command);
        log(`started redis-server ${server.version} on 127.0.0.1:${server.port} (pid ${server.pid})`);
      }
      const url = server?.url ?? (options.redis as { url: string }).url;
      observer = await connectObserver(url);
      const version = /redis_version:(\S+)/.exec(await observer.info('server'))?.[1] ?? 'unknown';
      report.redis = { url, version, startedHere: server !== undefined };
      // Cache every script up front: the table shows steady-state round trips, not first-call NOSCRIPTs.
      for (const script of Object.values(scripts)) await observer.script('LOAD', script.source);
    }

    for (const load of loads) {
      for (const mode of modes) {
        if (mode.usesRedis && !observer) {
          report.rows.push(skippedRow(load.name, mode, options.instances));
          continue;
        }
        running = await startInstances(instanceModule, options.instances, {
          mode: mode.name,
          limit: options.limit,
          periodMs: options.periodMs,
          redisUrl: report.redis?.url,
          prefix: `sluice:fleet:${runId}:${load.name}:${mode.name}:`,
          metrics: options.metrics,
        });
        log(
          `${load.name}, ${mode.name}: ${options.instances} instances on ports ${running.ports.join(', ')} (pids ${running.pids.join(', ')})`,
        );
        const before = observer ? await readCommandStats(observer) : undefined;
        const result = await driveLoad(running.ports, options.requests, KEY, load);
        const after = observer ? await readCommandStats(observer) : undefined;
        const scraped = options.metrics ? await Promise.all(running.metricsPorts.map(scrapeInstance)) : null;
        if (scraped) log(`${load.name}, ${mode.name}: scraped /metrics on ports ${running.metricsPorts.join(', ')}`);
        await running.stop();
        running = undefined;
        report.rows.push({
          load: load.name,
          mode: mode.name,
          label: mode.label,
          ran: true,
          admitted: sum(result.admitted),
          sentPerInstance: [...result.sent],
          admittedPerInstance: [...result.admitted],
          denied: sum(result.denied),
          errors: sum(result.errors),
          redisRoundTrips: delta(before, after, roundTripsBetween),
          redisCommands: delta(before, after, commandsBetween),
          scraped,
          elapsedMs: Math.round(result.elapsedMs),
        });
      }
    }
    if (observer && !server) await deleteKeys(observer, `sluice:fleet:${runId}:*`);
    return report;
  } finally {
    await running?.stop();
    observer?.disconnect();
    await server?.stop();
  }
}

function skippedRow(load: string, mode: FleetMode, instances: number): FleetRow {
  return {
    load,
    mode: mode.name,
    label: mode.label,
    ran: false,
    admitted: 0,
    sentPerInstance: Array.from({ length: instances }, () => 0),
    admittedPerInstance: Array.from({ length: instances }, () => 0),
    denied: 0,
    errors: 0,
    redisRoundTrips: null,
    redisCommands: null,
    scraped: null,
    elapsedMs: 0,
  };
}

async function connectObserver(url: string): Promise<Redis> {
  const { Redis } = await import('ioredis');
  const client = new Redis(url, { maxRetriesPerRequest: 1, lazyConnect: true, retryStrategy: () => null });
  client.on('error', () => {});
  await client.connect();
  return client;
}

/** Deletes this run's keys from a server the demo did not start. */
async function deleteKeys(client: Redis, pattern: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    if (keys.length > 0) await client.del(...keys);
    cursor = next;
  } while (cursor !== '0');
}

function delta(
  before: CommandStats | undefined,
  after: CommandStats | undefined,
  between: (before: CommandStats, after: CommandStats) => number,
): number | null {
  return before && after ? between(before, after) : null;
}

function sum(values: readonly number[]): number {
  return values.reduce((total, value) => total + value, 0);
}

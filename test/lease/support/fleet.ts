import { readCommandStats, roundTripsBetween } from '../../../bench/lib/commandstats.mjs';
import { type Algorithm, createLeasedLimiter, gcra, type LeasedLimiter } from '../../../src/index.js';
import { createRedisLimiter } from '../../../src/stores/redis/index.js';
import { manualClock } from '../../../src/testing/index.js';
import type { RedisServer } from '../../support/redis-server.js';
import { type RecordingRemote, recordingRemote } from './recording-remote.js';

/** Seed 000's fleet: 3 instances, a limit of 100 per hour, 1,000 attempts on one key. */
export const FLEET = { instances: 3, limit: 100, periodMs: 3_600_000, attempts: 1000 } as const;

/** Which instance takes attempt `i` (0-based). */
export type Load = (attempt: number) => number;

/** Round-robin over the instances. */
export const uniform: Load = (i) => i % FLEET.instances;
/** Round-robin until instances 0 and 1 have had 5 attempts each; then instance 2 takes the rest. */
export const skewed: Load = (i) => (i < 15 ? i % 3 : 2);
/** Round-robin for 75 attempts (near exhaustion at any lease size); then instance 2 takes the rest. */
export const lateQuiet: Load = (i) => (i < 75 ? i % 3 : 2);

export interface FleetRun {
  admitted: number;
  /** Remote decisions, counted at each instance's remote. */
  remoteCalls: number;
  /** Units the instances hold unspent at the end (stranded, unless returned later). */
  held: number;
  /** Refund calls made by lease return and adaptive trims, and the units they gave back. */
  returns: number;
  returnedUnits: number;
  /** Script calls Redis itself counted (INFO commandstats): decisions plus refunds. */
  redisRoundTrips: number;
  /** Attempts each instance received. */
  perInstance: number[];
}

export interface FleetOptions {
  leaseSize: number;
  load: Load;
  /** Idle time after which an instance returns unspent units; undefined: no return. */
  returnIdleMs?: number;
  adaptive?: boolean;
  /** The remote's algorithm; default GCRA at the fleet's limit. */
  algorithm?: Algorithm;
}

let runs = 0;

/**
 * Runs the experiment against a real redis-server: each instance is its own leased limiter with
 * its own ioredis connection, all on one injected clock (Redis gets it as the client clock), which
 * moves 10 ms per attempt, so 1,000 attempts take 10 s: far less than T = 36 s, so nothing
 * regenerates and every admission is accounted for by the limit of 100. With return on, every
 * instance looks for idle keys after each attempt, as its timer would.
 */
export async function runFleet(server: RedisServer, options: FleetOptions): Promise<FleetRun> {
  const clock = manualClock();
  const algorithm = options.algorithm ?? gcra({ limit: FLEET.limit, periodMs: FLEET.periodMs });
  const prefix = `fleet:${++runs}:`;
  const remotes: RecordingRemote[] = [];
  const instances: LeasedLimiter[] = [];
  for (let i = 0; i < FLEET.instances; i++) {
    const remote = recordingRemote(
      createRedisLimiter({ client: server.connect(), algorithm, prefix, clock: clock.now }),
    );
    remotes.push(remote);
    instances.push(
      createLeasedLimiter({
        remote,
        leaseSize: options.leaseSize,
        adaptive: options.adaptive ?? false,
        returnIdleMs: options.returnIdleMs ?? 0,
        returnCheckIntervalMs: 0,
        clock: clock.now,
        onWarning: false, // the recording remote has no invalidations; nothing is reset or blocked
      }),
    );
  }
  // Scripts cached before counting, so a NOSCRIPT round trip does not blur the count.
  const warm = remotes[0] as RecordingRemote;
  await warm.limit('warm-up');
  await warm.refund?.('warm-up', 1);
  const admin = server.connect();
  const before = await readCommandStats(admin);

  let admitted = 0;
  const perInstance = Array.from({ length: FLEET.instances }, () => 0);
  for (let attempt = 0; attempt < FLEET.attempts; attempt++) {
    const index = options.load(attempt);
    perInstance[index] = (perInstance[index] as number) + 1;
    if ((await (instances[index] as LeasedLimiter).limit('client')).allowed) admitted++;
    clock.advance(10);
    if (options.returnIdleMs !== undefined) await Promise.all(instances.map((instance) => instance.returnIdle()));
  }

  const redisRoundTrips = roundTripsBetween(before, await readCommandStats(admin));
  const remoteCalls = remotes.reduce((sum, remote) => sum + remote.calls(), 0) - 1;
  const stats = instances.map((instance) => instance.stats());
  const returns = stats.reduce((sum, each) => sum + each.returns, 0);
  const returnedUnits = stats.reduce((sum, each) => sum + each.returnedUnits, 0);
  const held = stats.reduce((sum, each) => sum + each.heldUnits, 0);
  return { admitted, remoteCalls, held, returns, returnedUnits, redisRoundTrips, perInstance };
}

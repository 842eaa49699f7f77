import type { Redis } from 'ioredis';
import type { Algorithm } from '../../src/algorithms/types.js';
import { createLeasedLimiter } from '../../src/lease/leased-limiter.js';
import type { Limiter } from '../../src/limiter.js';
import { createMemoryLimiter } from '../../src/stores/memory/memory-limiter.js';
import { createRedisLimiter } from '../../src/stores/redis/redis-limiter.js';
import type { ClientWrapper } from '../../src/stores/redis/script.js';

/** What an instance process hands a mode when it builds its limiter. */
export interface FleetModeContext {
  /** The demo's limit: GCRA, `limit` per `periodMs`, burst = limit. */
  readonly algorithm: Algorithm;
  /** A ready connection to the fleet's Redis when the mode uses Redis; the instance closes it. */
  readonly redis: Redis | undefined;
  /** Redis key prefix unique to this run and mode, so neither shares state with another. */
  readonly prefix: string;
  /** Times the Redis round trips (`storeMetrics`) when the demo runs with `--metrics`. */
  readonly wrapClient?: ClientWrapper | undefined;
}

/**
 * One row of the fleet table: how every instance of the fleet limits its requests.
 * The instance process looks the mode up by `name` and calls `create` once at start-up.
 */
export interface FleetMode {
  readonly name: string;
  /** The row's label in the table. */
  readonly label: string;
  readonly usesRedis: boolean;
  create(context: FleetModeContext): Limiter;
}

/**
 * Idle time after which the "return" rows give unspent units back. Short, so that returns land
 * within the demo's pause in the skewed load (see loads.ts).
 */
export const RETURN_IDLE_MS = 100;

const shared = ({ algorithm, redis, prefix, wrapClient }: FleetModeContext): Limiter =>
  createRedisLimiter({ client: redis, algorithm, prefix, wrapClient });

function leased(leaseSize: number, returning: boolean): FleetMode {
  return {
    name: `leased-${leaseSize}${returning ? '-return' : ''}`,
    label: `Redis GCRA, leased ${leaseSize} at a time${returning ? `, returned after ${RETURN_IDLE_MS} ms idle` : ''}`,
    usesRedis: true,
    // No instance resets or blocks a key, so no subscriber (SLUICE_LEASE_NO_INVALIDATIONS silenced).
    create: (context) =>
      createLeasedLimiter({
        remote: shared(context),
        leaseSize,
        returnIdleMs: returning ? RETURN_IDLE_MS : 0,
        onWarning: false,
      }),
  };
}

/** The rows of `sluice fleet`, in table order. */
export const fleetModes: readonly FleetMode[] = [
  {
    name: 'memory',
    label: 'memory limiter in each instance',
    usesRedis: false,
    create: ({ algorithm }) => createMemoryLimiter({ algorithm }),
  },
  { name: 'redis', label: 'shared Redis GCRA', usesRedis: true, create: shared },
  leased(5, false),
  leased(20, false),
  leased(5, true),
  leased(20, true),
];

/** The mode called `name`. @throws {Error} naming the known modes when there is none. */
export function findMode(name: string): FleetMode {
  const mode = fleetModes.find((each) => each.name === name);
  if (mode) return mode;
  throw new Error(`unknown fleet mode '${name}'; known: ${fleetModes.map((each) => each.name).join(', ')}`);
}

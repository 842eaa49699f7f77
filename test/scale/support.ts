import { randomInt } from 'node:crypto';
import { describe, it } from 'vitest';
import { type CommandStats, parseCommandStats, roundTripsBetween } from '../../bench/lib/commandstats.mjs';
import { createRedisLimiter, type RedisLimiterOptions } from '../../src/stores/redis/index.js';
import { runConformance } from '../../src/testing/index.js';
import { held } from '../support/held-keys.js';

/** Anything with ioredis's `info(section)`. */
interface InfoClient {
  info(section: string): Promise<string>;
}

/** Server-side counters summed over `nodes`: command calls and error replies by prefix. */
export interface ServerStats {
  commands: CommandStats;
  /** `INFO errorstats`: error replies by their first word (NOSCRIPT, ASK, MOVED, TRYAGAIN, CROSSSLOT…). */
  errors: ReadonlyMap<string, number>;
}

export async function serverStats(nodes: readonly InfoClient[]): Promise<ServerStats> {
  const commands = new Map<string, number>();
  const errors = new Map<string, number>();
  for (const node of nodes) {
    for (const [name, calls] of parseCommandStats(await node.info('commandstats'))) {
      commands.set(name, (commands.get(name) ?? 0) + calls);
    }
    for (const match of (await node.info('errorstats')).matchAll(/^errorstat_([^:]+):count=(\d+)/gm)) {
      errors.set(match[1] as string, (errors.get(match[1] as string) ?? 0) + Number(match[2]));
    }
  }
  return { commands, errors };
}

/** Script calls (EVALSHA, EVAL…) the nodes received between two readings, NOSCRIPT replies and redirections included. */
export function scriptCallsBetween(before: ServerStats, after: ServerStats): number {
  return roundTripsBetween(before.commands, after.commands);
}

/** Error replies with `prefix` between two readings. */
export function errorsBetween(before: ServerStats, after: ServerStats, prefix: string): number {
  return (after.errors.get(prefix) ?? 0) - (before.errors.get(prefix) ?? 0);
}

const ALPHABET = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789:_-.@/ {}é中😀';

/** A random identifier of 1..40 characters, hash-tag braces, spaces and non-ASCII included. */
export function randomIdentifier(): string {
  const characters = [...ALPHABET];
  return Array.from({ length: 1 + randomInt(40) }, () => characters[randomInt(characters.length)]).join('');
}

/** One row of a test file's conformance table: a Redis client kind, plain or batched. */
export interface RedisTarget {
  /** Shown in test names. */
  name: string;
  /** Connections 0..3 of this client kind; read in tests, once the file's `beforeAll` has opened them. */
  clients: () => readonly unknown[];
  /** Keys go under `${prefix}:${algorithm}:`; the limiter's default prefix when absent. */
  prefix?: string;
  batch?: RedisLimiterOptions['batch'];
  /**
   * A subscriber connection for connection `i` (ioredis, iovalkey or node-redis). Without one the limiter has no
   * invalidations, so that property is exempt: test/admin/fleet.test.ts holds them on one node
   * and on a Cluster.
   */
  subscriber?: (connection: number) => unknown;
}

/**
 * Registers the conformance suite for each target: a Redis limiter on the target's clients, on the
 * suite's manual clock, with keys held (see held-keys.ts) so Redis's real-time expiry cannot race it.
 */
export function runRedisConformance(targets: readonly RedisTarget[]): void {
  for (const { name, clients, prefix, batch, subscriber } of targets) {
    runConformance({
      name,
      test: { describe, it },
      capabilities: ['partial'],
      ...(subscriber === undefined && { exempt: { invalidations: 'no subscriber connection on this target' } }),
      create: (algorithm, clock, connection) =>
        createRedisLimiter({
          client: held(clients()[connection]),
          ...(subscriber && { subscriber: subscriber(connection) }),
          algorithm,
          prefix: prefix === undefined ? undefined : `${prefix}:${algorithm.name}:`,
          clock: clock.now,
          batch,
        }),
    });
  }
}

import { divideAlgorithm } from '../algorithms/divide.js';
import { algorithmFor } from '../algorithms/params.js';
import type { Algorithm } from '../algorithms/types.js';
import { ConfigError } from '../errors.js';
import type { Clock } from '../limiter.js';
import { createMemoryLimiter, type MemoryLimiter } from '../stores/memory/memory-limiter.js';
import { orDefault, requireFunction, requireInteger } from '../validate.js';
import { createKnownBlocks, type KnownBlocks } from './known-blocks.js';

/** Anything that knows how many instances share the limit now, e.g. a heartbeat registry. */
export interface InstanceCount {
  /** Live instances (integer ≥ 1); during an outage, the last known count. */
  instances(): number;
}

/** Options of the local fallback policy. */
export interface LocalFallbackOptions {
  /** How many instances share the limit: a fixed count, or a live estimate (`createHeartbeat`). */
  instances: number | InstanceCount;
  /**
   * The local algorithm for a given instance count. Default: the primary's algorithm divided
   * by it (`divideAlgorithm`), which supports GCRA.
   */
  algorithm?: (instances: number) => Algorithm;
  /**
   * Most keys the local limiter holds (it is bounded like any memory limiter), and most blocks
   * it remembers for them (see {@link LocalFallback.blocks}). Default 100,000.
   */
  maxKeys?: number;
}

/** The local limiter of the fallback policy, rebuilt when the instance count changes. */
export interface LocalFallback {
  /** The limiter for the current instance count, and that count. */
  current(): { limiter: MemoryLimiter; instances: number };
  /**
   * The blocks this process knows of (issued through it, or reported by the store's decisions),
   * which the fallback honours: kept across instance-count changes, at most `maxKeys`.
   */
  readonly blocks: KnownBlocks;
  /** Forgets `key`'s local state and its known block, as the store's `reset` does. */
  reset(key: string): void;
  close(): Promise<void>;
}

/**
 * A memory limiter enforcing the primary's limit ÷ N, N read from `options.instances` each time
 * the fallback decides. A change of N starts a new local limiter (fresh keys): N only changes
 * while the store answers heartbeats, which is when the fallback is idle.
 *
 * @throws {ConfigError} on invalid options, or when the algorithm cannot be divided.
 */
export function createLocalFallback(primary: Algorithm, options: LocalFallbackOptions, clock: Clock): LocalFallback {
  const { instances } = options;
  const count =
    typeof instances === 'number'
      ? constant(requireInteger('fallback.instances', instances))
      : typeof instances?.instances === 'function'
        ? () => instances.instances()
        : undefined;
  if (count === undefined) throw new ConfigError('fallback.instances must be an integer ≥ 1 or an InstanceCount');
  const build = requireFunction(
    'fallback.algorithm',
    orDefault(options.algorithm, (n: number) => divideAlgorithm(primary, n)),
  );
  const maxKeys = requireInteger('fallback.maxKeys', orDefault(options.maxKeys, 100_000));
  const create = (n: number) => ({
    instances: n,
    limiter: createMemoryLimiter({ algorithm: withDividedParams(build(n), primary, n), maxKeys, clock }),
  });
  let local = create(sane(count()));
  const blocks = createKnownBlocks(maxKeys, clock);

  return {
    current() {
      const n = sane(count());
      if (n !== local.instances) {
        void local.limiter.close();
        local = create(n);
      }
      return local;
    },
    blocks,
    reset(key) {
      local.limiter.resetSync(key);
      blocks.forget(key);
    },
    close: () => local.limiter.close(),
  };
}

const constant = (n: number) => () => n;

/**
 * `local` whose per-call params are the primary's, divided: a call under a plan's limit falls
 * back to that limit ÷ N (`divideAlgorithm`), whatever `fallback.algorithm` makes of the base.
 */
function withDividedParams(local: Algorithm, primary: Algorithm, n: number): Algorithm {
  const divided = new Map<Algorithm, Algorithm>();
  return {
    ...local,
    withParams(params) {
      const full = algorithmFor(primary, params);
      let share = divided.get(full);
      if (share === undefined) {
        if (divided.size >= 64) divided.clear();
        share = divideAlgorithm(full, n);
        divided.set(full, share);
      }
      return share;
    },
  };
}

/** A count from user code is trusted only as far as an integer ≥ 1. */
function sane(n: number): number {
  return Number.isSafeInteger(n) && n >= 1 ? n : 1;
}

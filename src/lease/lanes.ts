import { algorithmFor } from '../algorithms/params.js';
import type { Algorithm, AlgorithmParams } from '../algorithms/types.js';
import type { Decision } from '../decision.js';
import type { KeyState } from './key-state.js';
import { createKeyTable, type KeyTable } from './key-table.js';
import { answer, expire } from './local-decision.js';
import type { LeaseSettings } from './options.js';
import { createPartialAdmission } from './partial.js';
import { leaseWindowMs, passesThrough } from './pass-through.js';
import type { LeaseContext } from './remote-lease.js';
import { remoteModelOf } from './remote-model.js';
import { createReturns } from './returns.js';
import type { RoundTrip } from './round-trip.js';
import type { LeaseCounters } from './stats.js';

/** Distinct per-call parameter sets leased at once; calls under further ones go to the remote unleased. */
const MOST_LANES = 16;

/** Leases taken under one set of the remote algorithm's numbers: their model, keys and returns. */
export interface Lane {
  readonly context: LeaseContext;
  readonly table: KeyTable;
  /** Partial admission (`partial: true`) of `cost` for a key of this lane. */
  partially(key: string, state: KeyState | undefined, cost: number): Promise<Decision>;
}

/** Every lane of a leased limiter: the base one (no params) and one per set of per-call params. */
export interface Lanes {
  readonly base: Lane;
  /**
   * The lane of a call's params, made on first use; `undefined` past {@link MOST_LANES}.
   * @throws {InvalidParamsError} for params the remote's algorithm refuses.
   */
  of(params: AlgorithmParams | undefined): Lane | undefined;
  /**
   * Makes `lane` the only one holding units of `key`: units the key holds in another lane were
   * leased under other numbers, so they are given back now (refunded under their own numbers
   * when the remote takes refunds, else dropped) and never serve this call.
   */
  claim(lane: Lane, key: string): void;
  all(): Iterable<Lane>;
}

export function createLanes(
  settings: LeaseSettings,
  counters: LeaseCounters,
  nowMs: () => number,
  roundTrip: RoundTrip,
): Lanes {
  const { remote } = settings;
  const base = createLane(settings, counters, nowMs, roundTrip, remote.algorithm, undefined);
  const lanes = new Map<string, Lane>([[idOf(remote.algorithm), base]]);
  return {
    base,
    of(params) {
      if (params === undefined) return base;
      const core = algorithmFor(remote.algorithm, params);
      const id = idOf(core);
      let lane = lanes.get(id);
      if (lane === undefined && lanes.size < MOST_LANES) {
        lane = createLane(settings, counters, nowMs, roundTrip, core, params);
        lanes.set(id, lane);
      }
      return lane;
    },
    claim(lane, key) {
      if (lanes.size === 1) return;
      for (const other of lanes.values()) {
        if (other === lane) continue;
        const state = other.table.get(key);
        if (state === undefined) continue;
        other.table.delete(key);
        void other.context.returns.takeBack(key, state);
      }
    },
    all: () => lanes.values(),
  };
}

const idOf = (algorithm: Algorithm): string => `${algorithm.name}:${algorithm.scriptParams.join(',')}`;

function createLane(
  settings: LeaseSettings,
  counters: LeaseCounters,
  nowMs: () => number,
  roundTrip: RoundTrip,
  algorithm: Algorithm,
  params: AlgorithmParams | undefined,
): Lane {
  const { remote, returnIdleMs } = settings;
  const model = remoteModelOf(algorithm);
  const refusalTrustMs = returnIdleMs > 0 ? returnIdleMs : Number.POSITIVE_INFINITY;
  const refund = remote.refund;
  const table = createKeyTable(
    settings.maxKeys,
    (state) => state.units > 0,
    (key, state) => void returns.takeBack(key, state),
  );
  const returns = createReturns({
    refund: refund && ((key, units) => refund.call(remote, key, units, params && { params })),
    table,
    counters,
    returnIdleMs,
    intervalMs: model.intervalMs,
    nowMs,
    expire: (state, atMs) => expire(state, atMs, model, counters),
  });
  // A lease never asks for more than the lane's limit: one lease bounds what a change of numbers strands.
  const leaseSize = Math.min(settings.leaseSize, algorithm.limit);
  const windowMs = leaseWindowMs(leaseSize, model.intervalMs);
  const context: LeaseContext = {
    remote,
    params,
    model,
    counters,
    leaseSize,
    adaptiveDivisor: settings.adaptiveDivisor,
    // With lease return on, other instances may give units back while this one caches a refusal:
    // it asks again after at most returnIdleMs, so returned units reach it within that time.
    // While the remote's invalidations are not live, a reset elsewhere could go unheard: no
    // refusal is trusted, so a denied request asks the remote (docs/leasing.md, "Invalidation").
    refusalTrustMs: () => (remote.invalidations?.live === false ? 0 : refusalTrustMs),
    returns,
    roundTrip,
    passesThrough: () => passesThrough(windowMs, roundTrip),
    nowMs,
    clock: settings.clock,
  };
  const partially = createPartialAdmission({
    remote,
    params,
    limit: model.limit,
    counters,
    nowMs,
    expire: (state, atMs) => expire(state, atMs, model, counters),
    answer: (state, atMs, allowed, retryAfterMs) => answer(model, state, atMs, allowed, retryAfterMs),
  });
  return { context, table, partially };
}

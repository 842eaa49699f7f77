import { algorithmFor } from '../algorithms/params.js';
import type { Algorithm, AlgorithmParams } from '../algorithms/types.js';
import type { Decision } from '../decision.js';
import { createKeyState, type KeyState } from './key-state.js';
import { createKeyTable, type KeyTable } from './key-table.js';
import { answer, expire } from './local-decision.js';
import type { LeaseSettings } from './options.js';
import { createPartialAdmission } from './partial.js';
import { leaseWindowMs, passesThrough } from './pass-through.js';
import type { LeaseContext } from './remote-lease.js';
import { remoteModelOf } from './remote-model.js';
import { createReturns, type Returns } from './returns.js';
import type { RoundTrip } from './round-trip.js';
import type { LeaseCounters } from './stats.js';

/** Distinct per-call parameter sets leased at once; calls under further ones go to the remote unleased. */
const MOST_LANES = 16;

/** Leases taken under one set of the remote algorithm's numbers: their model and remote calls. */
export interface Lane {
  readonly context: LeaseContext;
  /** Partial admission (`partial: true`) of `cost` for a key of this lane. */
  partially(key: string, state: KeyState | undefined, cost: number): Promise<Decision>;
}

/**
 * Every lane of a leased limiter (the base one, no params, and one per set of per-call params)
 * over one table of keys: a key holds units in one lane at a time, and `maxKeys` bounds the
 * limiter whatever the lanes.
 */
export interface Lanes {
  readonly base: Lane;
  readonly table: KeyTable;
  readonly returns: Returns;
  /**
   * The lane of a call's params, made on first use; `undefined` past {@link MOST_LANES}.
   * @throws {InvalidParamsError} for params the remote's algorithm refuses.
   */
  of(params: AlgorithmParams | undefined): Lane | undefined;
  /**
   * The key's state for a call under `lane`'s numbers, or `undefined` for a key not held. A key
   * holding units leased under other numbers gives them back first, and never to this call:
   * returned under their own numbers when the remote takes refunds, else dropped (counted, and
   * the key's next leases shrink by them until the remote has them back, see
   * {@link KeyState.droppedUnits}); the key then starts afresh in `lane`. `null` while the key's
   * lease under other numbers is in flight: decide the call without leasing.
   */
  stateOf(lane: Lane, key: string): KeyState | undefined | null;
  all(): Iterable<Lane>;
}

export function createLanes(
  settings: LeaseSettings,
  counters: LeaseCounters,
  nowMs: () => number,
  roundTrip: RoundTrip,
): Lanes {
  const { remote } = settings;
  const refund = remote.refund;
  const table: KeyTable = createKeyTable(
    settings.maxKeys,
    (state) => state.units > 0,
    (key, state) => void returns.takeBack(key, state),
  );
  const returns = createReturns({
    refund: refund && ((key, units, params) => refund.call(remote, key, units, params && { params })),
    table,
    counters,
    returnIdleMs: settings.returnIdleMs,
    nowMs,
  });
  const make = (algorithm: Algorithm, params: AlgorithmParams | undefined) =>
    createLane(settings, counters, nowMs, roundTrip, returns, algorithm, params);
  const base = make(remote.algorithm, undefined);
  const lanes = new Map<string, Lane>([[idOf(remote.algorithm), base]]);
  return {
    base,
    table,
    returns,
    of(params) {
      if (params === undefined) return base;
      const core = algorithmFor(remote.algorithm, params);
      const id = idOf(core);
      let lane = lanes.get(id);
      if (lane === undefined && lanes.size < MOST_LANES) {
        lane = make(core, params);
        lanes.set(id, lane);
      }
      return lane;
    },
    stateOf(lane, key) {
      const state = table.get(key);
      if (state === undefined || state.lane === lane.context) return state;
      if (state.queue !== undefined) return null;
      const atMs = nowMs();
      expire(state, atMs, state.lane.model, counters);
      const dropping = refund === undefined ? state.units : 0;
      void returns.takeBack(key, state);
      const fresh = createKeyState(atMs, lane.context);
      const owed = atMs < state.droppedUntilMs ? state.droppedUnits : 0;
      fresh.droppedUnits = owed + dropping;
      fresh.droppedUntilMs = dropping > 0 ? Math.max(state.droppedUntilMs, state.resetAtMs) : state.droppedUntilMs;
      table.delete(key);
      table.add(key, fresh);
      return fresh;
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
  returns: Returns,
  algorithm: Algorithm,
  params: AlgorithmParams | undefined,
): Lane {
  const { remote, returnIdleMs } = settings;
  const model = remoteModelOf(algorithm);
  const refusalTrustMs = returnIdleMs > 0 ? returnIdleMs : Number.POSITIVE_INFINITY;
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
  return { context, partially };
}

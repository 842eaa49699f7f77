import type { InvalidationChange, Limiter } from '../limiter.js';
import type { Warner } from '../warnings.js';
import type { KeyState } from './key-state.js';
import type { KeyTable } from './key-table.js';
import type { LeaseCounters } from './stats.js';

/*
 * A leased instance serves from what it holds: leased units, cached refusals, a cached block.
 * When any instance resets, blocks, unblocks or rewards a key (or calls `invalidate`), the
 * remote's `invalidations` tell every instance, which forgets what it holds for the key and asks
 * the remote at its next request: one round trip (docs/leasing.md, "Invalidation").
 */

/**
 * Forgets what this instance knows of `state`'s key: the next request asks the remote. Held
 * units are dropped after a `reset` or `invalidate` (admissions before them no longer count, so
 * spending them would over-admit); after any other change they stay spent and are kept, and the
 * next request asks the remote once (cost 0) whether the key is blocked before spending them. A
 * lease in flight still answers its requests; what its reply leaves behind is treated as held
 * units are: dropped after a reset, kept and asked about before use after any other change, and
 * no refusal or block from it is kept (`epoch`, `resets`).
 */
export function forget(state: KeyState, counters: LeaseCounters, change: InvalidationChange | undefined): void {
  if (change === 'reset' || change === 'invalidate') {
    counters.expiredUnits += state.units;
    state.units = 0;
    state.resets++;
  }
  state.deniedUnits = 0;
  state.blockedUntilMs = 0;
  state.anchored = false;
  state.epoch++;
}

/**
 * Subscribes `tables` (one per lane) to the remote's invalidations; returns the unsubscribe. A
 * remote without them is warned about: other instances' changes would never reach this one.
 */
export function followInvalidations(
  remote: Limiter,
  tables: () => Iterable<KeyTable>,
  counters: LeaseCounters,
  warn: Warner,
): () => void {
  const invalidations = remote.invalidations;
  if (invalidations === undefined) {
    warn(
      'SLUICE_LEASE_NO_INVALIDATIONS',
      `the remote of this leased limiter ('${remote.algorithm.name}') has no invalidations: a reset, block or invalidate made on another instance does not reach what this one holds (leased units, cached refusals) until it expires; give the Redis limiter a subscriber connection, or set onWarning: false`,
    );
    return () => {};
  }
  return invalidations.subscribe((key, change) => {
    counters.invalidations++;
    for (const table of tables()) {
      if (key === undefined) {
        for (const [, state] of table.entries()) forget(state, counters, change);
        continue;
      }
      const state = table.get(key);
      if (state) forget(state, counters, change);
    }
  });
}

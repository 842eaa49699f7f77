import type { InvalidationChange, Limiter } from '../limiter.js';
import type { Warner } from '../warnings.js';
import type { KeyState } from './key-state.js';
import type { KeyTable } from './key-table.js';
import type { Returns } from './returns.js';
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
 * spending them would over-admit); given back after a `reward` (returned to the remote, which
 * never goes past fresh, or dropped when it takes no refunds), so that the key's total, held and
 * remote, stays within fresh; after a `block` or `unblock` they stay spent and are kept, and the
 * next request asks the remote once (cost 0) whether the key is blocked before spending them. A
 * lease in flight still answers its requests; what its reply leaves behind is treated as held
 * units are, and no refusal or block from it is kept (`epoch`, `resets`, `rewards`).
 */
export function forget(
  key: string,
  state: KeyState,
  counters: LeaseCounters,
  returns: Returns,
  change: InvalidationChange | undefined,
): void {
  if (change === 'reset' || change === 'invalidate') {
    counters.expiredUnits += state.units;
    state.units = 0;
    state.resets++;
  } else if (change === 'reward') {
    void returns.takeBack(key, state);
    state.rewards++;
  }
  state.deniedUnits = 0;
  state.blockedUntilMs = 0;
  state.anchored = false;
  state.epoch++;
}

/**
 * Subscribes the limiter's `table` to the remote's invalidations; returns the unsubscribe. A
 * remote without them is warned about: other instances' changes would never reach this one.
 */
export function followInvalidations(
  remote: Limiter,
  table: KeyTable,
  counters: LeaseCounters,
  returns: Returns,
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
    if (key === undefined) {
      for (const [each, state] of table.entries()) forget(each, state, counters, returns, change);
      return;
    }
    const state = table.get(key);
    if (state) forget(key, state, counters, returns, change);
  });
}

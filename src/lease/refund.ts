import { checkKey, costOf } from '../validate.js';
import { type KeyState, unitsAhead } from './key-state.js';
import { expire } from './local-decision.js';
import type { LeaseContext } from './remote-lease.js';

/**
 * A leased limiter's `refund` of `state`'s key (its state in the lane of the refund's params, if
 * held): units admitted and never used go back to the key's local lease first, as far as the lease can still hold them (units whose slots are still ahead, as any
 * held unit), so the next requests spend them without a remote call; the rest go to the
 * remote's `refund`. A key without a settled lease here (never seen, reset, evicted, or a
 * lease in flight) refunds to the remote alone. Call only when the remote has `refund`.
 *
 * Rejects with InvalidKeyError / InvalidCostError for bad input (nothing changes) and with the
 * remote's error when its refund fails (the units kept locally stay kept).
 */
export async function refundUnits(
  context: LeaseContext,
  state: KeyState | undefined,
  key: string,
  units: number,
): Promise<void> {
  checkKey(key);
  let rest = costOf({ cost: units });
  const { model, counters } = context;
  if (rest > 0 && state?.anchored === true && state.queue === undefined) {
    const atMs = context.nowMs();
    expire(state, atMs, model, counters);
    const kept = Math.min(rest, Math.max(0, unitsAhead(state, atMs, model.intervalMs) - state.units));
    state.units += kept;
    counters.refundedUnits += kept;
    rest -= kept;
  }
  if (rest === 0) return;
  const refund = context.remote.refund as NonNullable<typeof context.remote.refund>;
  counters.returns++;
  try {
    await refund.call(context.remote, key, rest, context.params && { params: context.params });
  } catch (error) {
    counters.returnErrors++;
    throw error;
  }
  counters.refundedUnits += rest;
  counters.returnedUnits += rest;
}

/**
 * A leased limiter's `charge` (debt): spends the key's units held on the local lease first (the
 * remote charged them when it leased them), so this instance's next requests wait for the debt as
 * every other's do, and charges the rest to the remote's `charge`. Call only when the remote has
 * `charge`. Rejects like {@link refundUnits}.
 */
export async function chargeUnits(
  context: LeaseContext,
  state: KeyState | undefined,
  key: string,
  units: number,
): Promise<void> {
  checkKey(key);
  let rest = costOf({ cost: units });
  if (rest > 0 && state?.anchored === true && state.queue === undefined) {
    expire(state, context.nowMs(), context.model, context.counters);
    const spent = Math.min(rest, state.units);
    state.units -= spent;
    context.counters.spentUnits += spent;
    rest -= spent;
  }
  if (rest === 0) return;
  const charge = context.remote.charge as NonNullable<typeof context.remote.charge>;
  await charge.call(context.remote, key, rest, context.params && { params: context.params });
}

/**
 * Counters of a leased limiter since it was created (a snapshot). Every unit that comes in is
 * accounted for, at every moment between calls:
 * `leasedUnits + refundedUnits = spentUnits + heldUnits + expiredUnits + returnedUnits + droppedUnits`.
 */
export interface LeaseStats {
  /** Decisions returned by `limit` and `tryLimit` (a `tryLimit` that needs the remote is not one). */
  requests: number;
  /** Requests admitted from leased units, including those that waited for a lease in flight. */
  localHits: number;
  /** Requests denied without a remote call: a cached refusal, or a cost above the limit. */
  cachedDenials: number;
  /** Calls to the remote's `limit` and `peek` (refunds are counted in `returns`). */
  remoteCalls: number;
  /**
   * Requests handed straight to the remote, leasing nothing, because a lease's units would
   * expire before a round trip brings them (docs/leasing.md, "Pass-through"); also in
   * `requests` and `remoteCalls`.
   */
  passedThrough: number;
  /** Remote calls that rejected; every request waiting on them rejected with the same error. */
  remoteErrors: number;
  /** Leases granted, and the units they carried. */
  leases: number;
  leasedUnits: number;
  /** Units taken off held units: admissions served from leases, and debt (`charge`) they paid. */
  spentUnits: number;
  /** Leases refused twice (full size, then the shortfall): each starts a cached refusal. */
  refusals: number;
  /** Requests that waited for another request's lease. */
  waited: number;
  /**
   * Leased units dropped unspent because they expired or their key was reset or invalidated (or
   * `reset` here): quota this instance stranded, or that no longer counts.
   */
  expiredUnits: number;
  /**
   * Leased units given up unspent and not returned: held under other numbers at a key's lane change
   * or by a key rewarded, evicted or closed, over a remote that takes no refunds, and units whose
   * return failed (also in `returnErrors`). At most one lease per key and instance until the
   * remote has them back (docs/leasing.md).
   */
  droppedUnits: number;
  /** Invalidations heard from the remote (`reset`, `block`, `reward`, … on any instance). */
  invalidations: number;
  /**
   * Units refunded to this limiter (`refund`): those the key's local lease could hold went back on
   * it, the rest to the remote (also counted in `returns` and `returnedUnits`).
   */
  refundedUnits: number;
  /**
   * Refund calls made to the remote (idle return, `close()`, eviction, a lane change, a reward,
   * and the part of a `refund` the local lease could not hold), the units they gave back, and
   * failures.
   */
  returns: number;
  returnedUnits: number;
  returnErrors: number;
  /** Keys held locally now. */
  keys: number;
  /** Leased units held now, not yet expired or spent (one pass over the keys). */
  heldUnits: number;
  /** The remote's round-trip time, ms: the smoothed mean of the calls timed (0 before the first). */
  roundTripMs: number;
}

/** The counters a leased limiter increments; `keys`, `heldUnits` and `roundTripMs` are read when asked. */
export type LeaseCounters = Omit<LeaseStats, 'keys' | 'heldUnits' | 'roundTripMs'>;

export function createCounters(): LeaseCounters {
  return {
    requests: 0,
    localHits: 0,
    cachedDenials: 0,
    remoteCalls: 0,
    passedThrough: 0,
    remoteErrors: 0,
    leases: 0,
    leasedUnits: 0,
    spentUnits: 0,
    refusals: 0,
    waited: 0,
    expiredUnits: 0,
    droppedUnits: 0,
    invalidations: 0,
    refundedUnits: 0,
    returns: 0,
    returnedUnits: 0,
    returnErrors: 0,
  };
}

import type { Decision, LimitOptions } from '../decision.js';
import type { Limiter } from '../limiter.js';
import type { RoundTrip } from './round-trip.js';
import type { LeaseCounters } from './stats.js';

/*
 * Pass-through: a lease is worth taking only if some of its units are still spendable when it
 * arrives. When they would all have expired on the way, a leased limiter leases nothing: it hands
 * a call straight to its remote, at the remote's own cost, or queues it behind the key's call in
 * flight for one call that asks for exactly the queue's demand (docs/leasing.md, "Pass-through").
 */

/** Sample one pass-through call in this many, so the round-trip estimate follows the remote. */
const SAMPLE_EVERY = 16;

/**
 * How long a lease of `leaseSize` units, taken from a key with no backlog, has spendable units
 * after it was asked for, in ms: the lease lasts leaseSize × T, and its units only until
 * the reply's reset, which the remote gives in whole ms rounded up, less the 1 ms held back to
 * keep it a lower bound (`recordLease`).
 */
export function leaseWindowMs(leaseSize: number, intervalMs: number): number {
  const lifeMs = leaseSize * intervalMs;
  return Math.min(lifeMs, Math.ceil(lifeMs) - 1);
}

/**
 * Whether a lease's units would all expire before a round trip brings them: then leasing only
 * adds a round trip's wait behind the key's lease in flight, and the remote decides alone.
 */
export function passesThrough(windowMs: number, roundTrip: RoundTrip): boolean {
  return windowMs <= roundTrip.estimateMs();
}

/** A call handed straight to the remote. */
export type PassThrough = (key: string, options: LimitOptions | undefined) => Promise<Decision>;

/** The calls a leased limiter passes to its remote; one in {@link SAMPLE_EVERY} is timed. */
export function createPassThrough(
  remote: Limiter,
  counters: LeaseCounters,
  clock: () => number,
  roundTrip: RoundTrip,
): PassThrough {
  let calls = 0;
  return (key, options) => {
    counters.requests++;
    counters.remoteCalls++;
    counters.passedThrough++;
    if (++calls % SAMPLE_EVERY !== 0) return remote.limit(key, options);
    const startedMs = clock();
    return remote.limit(key, options).then((decision) => {
      roundTrip.record(clock() - startedMs);
      return decision;
    });
  };
}

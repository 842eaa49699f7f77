import type { BreakerState } from './breaker.js';

/** Counters since creation (a snapshot). */
export interface FailureStats {
  /** `limit` and `peek` calls answered. */
  decisions: number;
  /** Calls that reached the wrapped limiter's asynchronous path (the store, unless a lease served it). */
  storeCalls: number;
  /**
   * Decisions the wrapped limiter took synchronously, without I/O, through its `tryLimit` (lease
   * hits and cached refusals of a leased limiter): no deadline, no breaker, served during an outage too.
   */
  localDecisions: number;
  /** Degraded decisions that admitted. */
  degradedAllowed: number;
  /** Degraded decisions that denied. */
  degradedDenied: number;
  /** Calls whose reply missed the deadline. */
  timeouts: number;
  /** Calls that failed on the connection. */
  connectionErrors: number;
  /** Calls that failed on a script error or an unreadable reply. */
  scriptErrors: number;
  /** Calls answered without asking the store because the breaker was open. */
  breakerRejections: number;
  /** Times the breaker opened (a failed half-open probe opens it again and counts). */
  breakerOpens: number;
  /** Replies (or errors) that arrived after their deadline and were discarded. */
  lateReplies: number;
  /** Requests admitted by shadow mode although they were denied. */
  shadowDenied: number;
  /** The breaker's state now. */
  breaker: BreakerState;
}

/** The counters a policy limiter increments; `breakerOpens` and `breaker` are read from the breaker. */
export type PolicyCounters = Omit<FailureStats, 'breakerOpens' | 'breaker'>;

export function createPolicyCounters(): PolicyCounters {
  return {
    decisions: 0,
    storeCalls: 0,
    localDecisions: 0,
    degradedAllowed: 0,
    degradedDenied: 0,
    timeouts: 0,
    connectionErrors: 0,
    scriptErrors: 0,
    breakerRejections: 0,
    lateReplies: 0,
    shadowDenied: 0,
  };
}

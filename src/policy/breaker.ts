import type { Clock } from '../limiter.js';
import { orDefault, requireDurationMs, requireInteger } from '../validate.js';

/** Options of the circuit breaker in `withFailurePolicy`. */
export interface BreakerOptions {
  /** Consecutive store failures (errors or timeouts) that open the breaker. Integer ≥ 1; default 5. */
  failureThreshold?: number;
  /**
   * Milliseconds the breaker stays open before one probe may reach the store. Integer in
   * 1..2^31 − 1 (the bound of every duration option); default 1000.
   */
  coolDownMs?: number;
}

/**
 * `'closed'`: calls reach the store. `'open'`: no call reaches the store until the cool-down
 * ends. `'half-open'`: the cool-down ended and one probe is (or may be) in flight.
 */
export type BreakerState = 'closed' | 'open' | 'half-open';

/** Whether a call admitted by the breaker is an ordinary call or the single half-open probe. */
export type BreakerTicket = 'call' | 'probe';

/** A circuit breaker as a small state machine on an injected clock; it never starts timers. */
export interface Breaker {
  readonly state: BreakerState;
  /** Times the breaker went to `'open'` (a failed probe opens it again and counts). */
  readonly opens: number;
  /** A ticket to call the store, or `undefined` when the call must not reach it now. */
  acquire(): BreakerTicket | undefined;
  succeeded(ticket: BreakerTicket): void;
  failed(ticket: BreakerTicket): void;
  /** The call ended without telling anything about the store's health (e.g. a caller bug). */
  released(ticket: BreakerTicket): void;
  /** Milliseconds until a call may reach the store again: the remaining cool-down when open, else the full cool-down. */
  retryInMs(): number;
}

/**
 * Opens after `failureThreshold` consecutive failures; after `coolDownMs` lets exactly one
 * probe through (half-open); the probe's success closes it, its failure opens it again.
 * Results of calls admitted before the breaker opened are ignored once it is open, so a burst
 * of in-flight calls failing together opens it once, and a straggler's success cannot close it.
 *
 * @throws {ConfigError} on invalid options.
 */
export function createBreaker(options: BreakerOptions, clock: Clock): Breaker {
  const failureThreshold = requireInteger('breaker.failureThreshold', orDefault(options.failureThreshold, 5));
  const coolDownMs = requireDurationMs('breaker.coolDownMs', orDefault(options.coolDownMs, 1000));
  let state: BreakerState = 'closed';
  let failures = 0;
  let openUntil = 0;
  let probing = false;
  let opens = 0;

  const open = () => {
    state = 'open';
    openUntil = clock() + coolDownMs;
    probing = false;
    opens++;
  };

  const breaker: Omit<Breaker, 'state' | 'opens'> = {
    acquire() {
      if (state === 'closed') return 'call';
      if (state === 'open' && clock() >= openUntil) state = 'half-open';
      if (state === 'half-open' && !probing) {
        probing = true;
        return 'probe';
      }
      return undefined;
    },
    succeeded(ticket) {
      if (ticket === 'probe') {
        state = 'closed';
        probing = false;
      }
      if (state === 'closed') failures = 0;
    },
    failed(ticket) {
      if (ticket === 'probe') return open();
      if (state === 'closed' && ++failures >= failureThreshold) open();
    },
    released(ticket) {
      if (ticket === 'probe') probing = false;
    },
    retryInMs() {
      return state === 'open' ? Math.max(1, Math.ceil(openUntil - clock())) : coolDownMs;
    },
  };
  // Defined after the literal: a getter inside it would put the breaker in V8's dictionary mode,
  // where every decision's acquire and succeeded are hash lookups.
  return Object.defineProperties(breaker, {
    state: { get: () => state, enumerable: true, configurable: true },
    opens: { get: () => opens, enumerable: true, configurable: true },
  }) as Breaker;
}

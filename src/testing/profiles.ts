import { fixedWindow } from '../algorithms/fixed-window.js';
import { gcra } from '../algorithms/gcra.js';
import { slidingWindowCounter } from '../algorithms/sliding-window-counter.js';
import { slidingWindowLog } from '../algorithms/sliding-window-log.js';
import { tokenBucket } from '../algorithms/token-bucket.js';
import type { Algorithm, AlgorithmName, AlgorithmParams } from '../algorithms/types.js';
import { fixedWindowReference } from './reference/fixed-window.js';
import { gcraReference } from './reference/gcra.js';
import { slidingWindowCounterReference } from './reference/sliding-window-counter.js';
import { slidingWindowLogReference } from './reference/sliding-window-log.js';
import { tokenBucketReference } from './reference/token-bucket.js';
import type { ReferenceModel } from './reference/types.js';

/** The properties of the conformance suite, by name. */
export type PropertyName =
  | 'fresh-key-admits-limit'
  | 'denial-charges-nothing'
  | 'replenishes-at-rate'
  | 'full-after-period'
  | 'keys-isolated'
  | 'remaining-coherent'
  | 'retry-after-exact'
  | 'never-possible-cost'
  | 'zero-cost'
  | 'peek'
  | 'reset'
  | 'invalid-input'
  | 'concurrency'
  | 'reference-model'
  | 'reservation-settle'
  | 'reservation-expiry'
  | 'reservation-debt'
  | 'per-request-params'
  | 'block'
  | 'penalty-reward'
  | 'invalidations'
  /** Only for a target declaring the `'partial'` capability. */
  | 'partial-admission';

/** How the suite builds, models and judges one algorithm. */
export interface AlgorithmProfile {
  readonly name: AlgorithmName;
  /** An algorithm whose fresh key holds exactly `limit` units and that admits `limit` per `periodMs`. */
  build(limit: number, periodMs: number): Algorithm;
  /** The per-call params of `build(limit, periodMs)`'s numbers, for a limiter built otherwise. */
  paramsOf(limit: number, periodMs: number): AlgorithmParams;
  /** A fresh slow model of the same algorithm. */
  reference(limit: number, periodMs: number): ReferenceModel;
  /**
   * Properties that do not hold for this algorithm, each with the reason. A property is never
   * weakened for everyone: it is either met exactly or declared here.
   */
  readonly exempt: Partial<Record<PropertyName, string>>;
}

// A window or a log cannot tell which admission a refund would undo, so it has no refund, and
// `reserve` needs one (ConfigError).
const NO_RESERVATION = 'no refund (a window cannot tell which admission to undo), which reserve needs';
const NO_RESERVATIONS = {
  'reservation-settle': NO_RESERVATION,
  'reservation-expiry': NO_RESERVATION,
  'reservation-debt': NO_RESERVATION,
};

/** One profile per algorithm Sluice ships. */
export const profiles: AlgorithmProfile[] = [
  {
    name: 'gcra',
    build: (limit, periodMs) => gcra({ limit, periodMs }),
    paramsOf: (limit, periodMs) => ({ limit, periodMs }),
    reference: (limit, periodMs) => gcraReference(limit, periodMs),
    exempt: {},
  },
  {
    name: 'token-bucket',
    build: (limit, periodMs) => tokenBucket({ capacity: limit, rate: limit, periodMs }),
    paramsOf: (limit, periodMs) => ({ capacity: limit, rate: limit, periodMs }),
    reference: (limit, periodMs) => tokenBucketReference({ capacity: limit, rate: limit, periodMs }),
    exempt: {},
  },
  {
    name: 'fixed-window',
    build: (limit, windowMs) => fixedWindow({ limit, windowMs }),
    paramsOf: (limit, windowMs) => ({ limit, windowMs }),
    reference: (limit, windowMs) => fixedWindowReference({ limit, windowMs }),
    exempt: {
      ...NO_RESERVATIONS,
      'replenishes-at-rate':
        'a window gives nothing back until it closes, then the whole limit at once (test/algorithms/cases.test.ts)',
    },
  },
  {
    name: 'sliding-window-log',
    build: (limit, windowMs) => slidingWindowLog({ limit, windowMs }),
    paramsOf: (limit, windowMs) => ({ limit, windowMs }),
    reference: (limit, windowMs) => slidingWindowLogReference({ limit, windowMs }),
    exempt: {
      ...NO_RESERVATIONS,
      'replenishes-at-rate':
        'units come back when the requests that spent them leave the window, not at a steady rate: ' +
        'a burst of the whole limit comes back all at once one window later',
    },
  },
  {
    name: 'sliding-window-counter',
    build: (limit, windowMs) => slidingWindowCounter({ limit, windowMs }),
    paramsOf: (limit, windowMs) => ({ limit, windowMs }),
    reference: (limit, windowMs) => slidingWindowCounterReference({ limit, windowMs }),
    exempt: {
      ...NO_RESERVATIONS,
      'replenishes-at-rate':
        'nothing comes back during the window that was exhausted; the next window gives units back as the ' +
        "previous window's weight falls, i.e. at the steady rate only for evenly spread traffic",
      'full-after-period':
        "a burst at a window's start still weighs fully at the next window's start (the approximation assumes " +
        'it was spread over its window); the whole limit is back two windows later',
    },
  },
];

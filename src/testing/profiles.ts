import { gcra } from '../algorithms/gcra.js';
import type { Algorithm, AlgorithmName } from '../algorithms/types.js';
import { gcraReference } from './reference/gcra.js';
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
  | 'reference-model';

/** How the suite builds, models and judges one algorithm. */
export interface AlgorithmProfile {
  readonly name: AlgorithmName;
  /** An algorithm whose fresh key holds exactly `limit` units and that admits `limit` per `periodMs`. */
  build(limit: number, periodMs: number): Algorithm;
  /** A fresh slow model of the same algorithm. */
  reference(limit: number, periodMs: number): ReferenceModel;
  /**
   * Properties that do not hold for this algorithm, each with the reason. A property is never
   * weakened for everyone: it is either met exactly or declared here.
   */
  readonly exempt: Partial<Record<PropertyName, string>>;
}

/** One profile per algorithm Sluice ships. */
export const profiles: AlgorithmProfile[] = [
  {
    name: 'gcra',
    build: (limit, periodMs) => gcra({ limit, periodMs }),
    reference: (limit, periodMs) => gcraReference(limit, periodMs),
    exempt: {},
  },
];

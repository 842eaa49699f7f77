import type { DegradedReason } from '../decision.js';
import { createDegradedSpells, type DegradedTransition } from '../degraded-spells.js';
import { monotonicClock } from '../limiter.js';
import type { ChargeResult } from './nested.js';

/**
 * Why a request's limits were degraded: a failure policy's reason, or `'store-unavailable'`
 * when a limiter without a policy threw `StoreUnavailableError`.
 */
export type HttpDegradedReason = DegradedReason | 'store-unavailable';

/** A change between degraded and ordinary requests, as told to `onDegradedChange`. */
export type HttpDegradedChange = DegradedTransition<HttpDegradedReason>;

/** What the core tells the watch about each request that charged at least one limit. */
export interface DegradedWatch {
  decided(results: readonly ChargeResult[]): void;
  storeFailed(): void;
}

/**
 * Turns requests into `onDegradedChange` events: a request is degraded when any of its limits was
 * answered by a failure policy, or the store threw. Requests no limit applied to are not counted.
 */
export function watchDegraded(listener: ((event: HttpDegradedChange) => void) | undefined): DegradedWatch | undefined {
  if (listener === undefined) return undefined;
  const spells = createDegradedSpells<HttpDegradedReason>(monotonicClock);
  const tell = (degraded: boolean, reason: HttpDegradedReason) => {
    const event = spells.observe(degraded, reason);
    if (event === undefined) return;
    try {
      listener(event);
    } catch {
      // A logging bug must not turn into a failed request.
    }
  };
  return {
    decided(results) {
      const degraded = results.find((result) => result.decision.degraded);
      tell(degraded !== undefined, degraded?.decision.degradedReason ?? 'store-unavailable');
    },
    storeFailed: () => tell(true, 'store-unavailable'),
  };
}

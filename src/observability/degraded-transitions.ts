import type { Attributes, Meter } from '@opentelemetry/api';
import type { Decision, DegradedReason } from '../decision.js';
import type { Clock } from '../limiter.js';
import { ATTRIBUTES as A, METRICS } from './names.js';
import { observableSeries } from './series.js';

/**
 * A change between degraded and ordinary decisions, as told to `onDegradedTransition`: one event
 * when the first degraded decision follows ordinary ones, one when the first ordinary decision
 * follows degraded ones, never one per decision.
 */
export type DegradedTransition =
  | {
      /** The limiter began answering degraded. */
      state: 'degraded';
      /** The first degraded decision's reason. */
      reason: DegradedReason | undefined;
    }
  | {
      /** The limiter answers ordinary decisions again. */
      state: 'recovered';
      /** The reason of the first degraded decision of the spell. */
      reason: DegradedReason | undefined;
      /** Degraded decisions answered between the two transitions. */
      degradedDecisions: number;
      /** Milliseconds from the first degraded decision to the first ordinary one. */
      durationMs: number;
    };

/** Follows decisions, and reports transitions (counter, 0/1 gauge, callback). */
export function createDegradedTracker(
  meter: Meter,
  base: Attributes,
  clock: Clock,
  onTransition: ((event: DegradedTransition) => void) | undefined,
): (decision: Decision) => void {
  const transitions = observableSeries(meter, METRICS.degradedTransitions, {
    description: 'Transitions between ordinary and degraded decisions, by the state entered.',
    unit: '{transition}',
  });
  const entered = transitions.add({ ...base, [A.transition]: 'degraded' });
  const recovered = transitions.add({ ...base, [A.transition]: 'recovered' });
  let spell: { reason: DegradedReason | undefined; startedAtMs: number; decisions: number } | undefined;
  meter
    .createObservableGauge(METRICS.degraded, {
      description: '1 while the last decision was degraded, else 0.',
      unit: '1',
    })
    .addCallback((result) => result.observe(spell ? 1 : 0, base));
  const tell = (event: DegradedTransition) => {
    try {
      onTransition?.(event);
    } catch {
      // A listener's bug must not change the decision.
    }
  };

  return (decision) => {
    if (decision.degraded) {
      if (spell) spell.decisions++;
      else {
        spell = { reason: decision.degradedReason, startedAtMs: clock(), decisions: 1 };
        entered.value++;
        tell({ state: 'degraded', reason: spell.reason });
      }
    } else if (spell) {
      const { reason, startedAtMs, decisions } = spell;
      spell = undefined;
      recovered.value++;
      tell({ state: 'recovered', reason, degradedDecisions: decisions, durationMs: clock() - startedAtMs });
    }
  };
}

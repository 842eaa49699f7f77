import type { Attributes, Meter } from '@opentelemetry/api';
import type { Decision, DegradedReason } from '../decision.js';
import { createDegradedSpells, type DegradedTransition } from '../degraded-spells.js';
import type { Clock } from '../limiter.js';
import { ATTRIBUTES as A, METRICS } from './names.js';
import { observableSeries } from './series.js';

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
  const spells = createDegradedSpells<DegradedReason | undefined>(clock);
  meter
    .createObservableGauge(METRICS.degraded, {
      description: '1 while the last decision was degraded, else 0.',
      unit: '1',
    })
    .addCallback((result) => result.observe(spells.active() ? 1 : 0, base));

  return (decision) => {
    const event = spells.observe(decision.degraded === true, decision.degradedReason);
    if (event === undefined) return;
    if (event.state === 'degraded') entered.value++;
    else recovered.value++;
    try {
      onTransition?.(event);
    } catch {
      // A listener's bug must not change the decision.
    }
  };
}

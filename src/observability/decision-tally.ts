import type { Attributes, Meter } from '@opentelemetry/api';
import type { Decision } from '../decision.js';
import { ATTRIBUTES as A, METRICS } from './names.js';
import { getOrAdd, observableSeries, type Series, type SeriesSet } from './series.js';

/** Labels beyond this many share the label `'other'`: a buggy `labelOf` must not explode cardinality. */
export const MAX_LABELS = 100;

export interface TallyOptions {
  meter: Meter;
  name: string;
  algorithm: string;
  nearLimitRatio: number;
  labelOf: ((key: string) => string) | undefined;
}

/** Counts a decision in the series of one label (or of every key, without `labelOf`). */
type GroupRecord = (decision: Decision, cost: number) => void;

export interface DecisionTally {
  /** Counts one decision of `cost` units for `key`. */
  record(decision: Decision, cost: number, key: string): void;
  /** Counts one call that rejected instead of deciding. */
  failed(error: unknown): void;
}

/**
 * Counts decisions, units and near-limit decisions per outcome (and label), reported by
 * asynchronous counters, so a decision costs a few increments.
 */
export function createDecisionTally(options: TallyOptions): DecisionTally {
  const { meter, nearLimitRatio, labelOf } = options;
  const decisions = observableSeries(meter, METRICS.decisions, {
    description: 'Decisions answered, by outcome (allowed, denied, degraded).',
    unit: '{decision}',
  });
  const units = observableSeries(meter, METRICS.units, {
    description: 'Units requested by decisions (cost-weighted), by whether they were admitted.',
    unit: '{unit}',
  });
  const nearLimit = observableSeries(meter, METRICS.nearLimit, {
    description: 'Allowed decisions that left remaining under nearLimitRatio of the limit.',
    unit: '{decision}',
  });
  const errors = observableSeries(meter, METRICS.decisionErrors, {
    description: 'Calls that rejected instead of deciding, by error code.',
    unit: '{call}',
  });
  const base: Attributes = { [A.limit]: options.name, [A.algorithm]: options.algorithm };

  const sets = { decisions, units, nearLimit };
  const groupOf = (labels: Attributes) => groupRecord(sets, { ...base, ...labels }, nearLimitRatio);
  const labelled = new Map<string, GroupRecord>();
  const labelledGroup = (labelOf: (key: string) => string, key: string): GroupRecord => {
    let label = String(labelOf(key));
    if (!labelled.has(label) && labelled.size >= MAX_LABELS) label = 'other';
    return getOrAdd(labelled, label, () => groupOf({ [A.label]: label }));
  };
  const errorSeries = new Map<string, Series>();

  return {
    record: labelOf ? (decision, cost, key) => labelledGroup(labelOf, key)(decision, cost) : groupOf({}),
    failed(error) {
      const code = (error as { code?: unknown } | null)?.code;
      const type = typeof code === 'string' ? code : error instanceof Error ? error.name : 'unknown';
      getOrAdd(errorSeries, type, () => errors.add({ ...base, [A.errorType]: type })).value++;
    },
  };
}

interface SeriesSets {
  decisions: SeriesSet;
  units: SeriesSet;
  nearLimit: SeriesSet;
}

/**
 * The series of one attribute set, and the hot path of every instrumented decision: the series
 * are this closure's own, so counting an ordinary decision is two or three increments, no lookup.
 */
function groupRecord(sets: SeriesSets, attributes: Attributes, nearLimitRatio: number): GroupRecord {
  const allowed = sets.decisions.add({ ...attributes, [A.outcome]: 'allowed' });
  const denied = sets.decisions.add({ ...attributes, [A.outcome]: 'denied' });
  const admittedUnits = sets.units.add({ ...attributes, [A.admitted]: true });
  const deniedUnits = sets.units.add({ ...attributes, [A.admitted]: false });
  const near = sets.nearLimit.add(attributes);
  const degraded = new Map<string, Series>();
  const degradedSeries = (decision: Decision): Series =>
    getOrAdd(degraded, `${decision.degradedReason}|${decision.failure}`, () =>
      sets.decisions.add({
        ...attributes,
        [A.outcome]: 'degraded',
        [A.degradedReason]: decision.degradedReason ?? 'unknown',
        [A.failure]: decision.failure ?? 'unknown',
      }),
    );
  return (decision, cost) => {
    if (decision.degraded) {
      degradedSeries(decision).value++;
      (decision.allowed ? admittedUnits : deniedUnits).value += cost;
    } else if (decision.allowed) {
      allowed.value++;
      admittedUnits.value += cost;
      if (decision.remaining < nearLimitRatio * decision.limit) near.value++;
    } else {
      denied.value++;
      deniedUnits.value += cost;
    }
  };
}

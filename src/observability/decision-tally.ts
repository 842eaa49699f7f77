import type { Attributes, Meter } from '@opentelemetry/api';
import type { Decision } from '../decision.js';
import { ATTRIBUTES as A, METRICS } from './names.js';
import { getOrAdd, observableSeries, type Series } from './series.js';

/** Labels beyond this many share the label `'other'`: a buggy `labelOf` must not explode cardinality. */
export const MAX_LABELS = 100;

export interface TallyOptions {
  meter: Meter;
  name: string;
  algorithm: string;
  nearLimitRatio: number;
  labelOf: ((key: string) => string) | undefined;
}

/** The series of one label (or of every key, without `labelOf`). */
interface Group {
  readonly base: Attributes;
  readonly allowed: Series;
  readonly denied: Series;
  readonly admittedUnits: Series;
  readonly deniedUnits: Series;
  readonly nearLimit: Series;
  readonly degraded: Map<string, Series>;
}

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

  const groupOf = (labels: Attributes): Group => {
    const attributes = { ...base, ...labels };
    return {
      base: attributes,
      allowed: decisions.add({ ...attributes, [A.outcome]: 'allowed' }),
      denied: decisions.add({ ...attributes, [A.outcome]: 'denied' }),
      admittedUnits: units.add({ ...attributes, [A.admitted]: true }),
      deniedUnits: units.add({ ...attributes, [A.admitted]: false }),
      nearLimit: nearLimit.add(attributes),
      degraded: new Map(),
    };
  };
  const unlabelled = labelOf ? undefined : groupOf({});
  const labelled = new Map<string, Group>();
  const labelledGroup = (key: string): Group => {
    let label = String((labelOf as (key: string) => string)(key));
    if (!labelled.has(label) && labelled.size >= MAX_LABELS) label = 'other';
    return getOrAdd(labelled, label, () => groupOf({ [A.label]: label }));
  };
  const degradedSeries = (group: Group, decision: Decision): Series => {
    const id = `${decision.degradedReason}|${decision.failure}`;
    return getOrAdd(group.degraded, id, () =>
      decisions.add({
        ...group.base,
        [A.outcome]: 'degraded',
        [A.degradedReason]: decision.degradedReason ?? 'unknown',
        [A.failure]: decision.failure ?? 'unknown',
      }),
    );
  };
  const errorSeries = new Map<string, Series>();

  return {
    record(decision, cost, key) {
      const group = unlabelled ?? labelledGroup(key);
      if (decision.allowed) group.admittedUnits.value += cost;
      else group.deniedUnits.value += cost;
      if (decision.degraded) degradedSeries(group, decision).value++;
      else if (!decision.allowed) group.denied.value++;
      else {
        group.allowed.value++;
        if (decision.remaining < nearLimitRatio * decision.limit) group.nearLimit.value++;
      }
    },
    failed(error) {
      const code = (error as { code?: unknown } | null)?.code;
      const type = typeof code === 'string' ? code : error instanceof Error ? error.name : 'unknown';
      getOrAdd(errorSeries, type, () => errors.add({ ...base, [A.errorType]: type })).value++;
    },
  };
}

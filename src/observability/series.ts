import type { Attributes, Meter, MetricOptions } from '@opentelemetry/api';

/** One attribute set's running total, read by an observable instrument at collection. */
export interface Series {
  readonly attributes: Attributes;
  value: number;
}

/**
 * A cumulative total per attribute set, counted with a plain `+=` on the hot path and reported
 * by an asynchronous counter when the reader collects: a synchronous `Counter.add` hashes its
 * attributes on every call, which would cost more than a memory decision.
 */
export interface SeriesSet {
  /** Adds a series (reported from now on, 0 until counted). */
  add(attributes: Attributes): Series;
}

export function observableSeries(meter: Meter, name: string, options: MetricOptions): SeriesSet {
  const all: Series[] = [];
  meter.createObservableCounter(name, options).addCallback((result) => {
    for (const series of all) result.observe(series.value, series.attributes);
  });
  return {
    add(attributes) {
      const series = { attributes, value: 0 };
      all.push(series);
      return series;
    },
  };
}

/** The value `map` holds for `key`, made and stored by `make` the first time. */
export function getOrAdd<K, V>(map: Map<K, V>, key: K, make: () => V): V {
  let value = map.get(key);
  if (value === undefined) {
    value = make();
    map.set(key, value);
  }
  return value;
}

import type { Attributes } from '@opentelemetry/api';
import { DataPointType, MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';

/** A reader that exports nothing: the test calls `collect()` when it wants the numbers. */
class CollectingReader extends MetricReader {
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

/** One data point, flattened: a sum or gauge's value, a histogram's count, sum and buckets. */
export interface Point {
  name: string;
  unit: string;
  attributes: Attributes;
  value?: number;
  count?: number;
  sum?: number;
}

/** A real SDK MeterProvider with a reader the test collects from. */
export function createMeters() {
  const reader = new CollectingReader();
  const provider = new MeterProvider({ readers: [reader] });
  const meter = provider.getMeter('sluice-test');
  const collect = async (): Promise<Point[]> => {
    const { resourceMetrics, errors } = await reader.collect();
    if (errors.length > 0) throw new AggregateError(errors, 'metric collection failed');
    const points: Point[] = [];
    for (const scope of resourceMetrics.scopeMetrics) {
      for (const metric of scope.metrics) {
        const { name, unit } = metric.descriptor;
        for (const point of metric.dataPoints) {
          if (metric.dataPointType === DataPointType.HISTOGRAM) {
            const value = point.value as { count: number; sum?: number };
            points.push({ name, unit, attributes: point.attributes, count: value.count, sum: value.sum });
          } else points.push({ name, unit, attributes: point.attributes, value: point.value as number });
        }
      }
    }
    return points;
  };
  /** The value of `name` at exactly the attributes that include `match` (0 when absent). */
  const totalOf = (points: Point[], name: string, match: Attributes = {}): number =>
    points
      .filter((p) => p.name === name && Object.entries(match).every(([k, v]) => p.attributes[k] === v))
      .reduce((total, p) => total + (p.value ?? p.count ?? 0), 0);
  return { meter, collect, totalOf, shutdown: () => provider.shutdown() };
}

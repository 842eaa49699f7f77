import type { Meter } from '@opentelemetry/api';
import { ConfigError } from '../errors.js';

/** The user's meter: `sluice/otel` never loads `@opentelemetry/api` itself. */
export function requireMeter(options: { meter?: unknown } | undefined): Meter {
  if (typeof options !== 'object' || options === null) throw new ConfigError('options must be an object');
  const meter = options.meter as Partial<Meter> | undefined;
  if (
    typeof meter !== 'object' ||
    meter === null ||
    typeof meter.createHistogram !== 'function' ||
    typeof meter.createObservableCounter !== 'function'
  ) {
    throw new ConfigError('meter must be an OpenTelemetry Meter (e.g. metrics.getMeter("sluice"))');
  }
  return meter as Meter;
}

/** The `sluice.limit` attribute: a non-empty string, default `'default'`. */
export function requireName(name: unknown): string {
  if (name === undefined) return 'default';
  if (typeof name !== 'string' || name.length === 0) throw new ConfigError('name must be a non-empty string');
  return name;
}

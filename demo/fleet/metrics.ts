import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Meter } from '@opentelemetry/api';

/** An instance's OpenTelemetry meter, exposed for Prometheus on its own loopback port. */
export interface InstanceMetrics {
  readonly meter: Meter;
  /** The port whose `/metrics` serves the Prometheus text exposition. */
  readonly port: number;
  close(): Promise<void>;
}

/**
 * A MeterProvider read by `@opentelemetry/exporter-prometheus`, served on a free loopback port.
 * The exporter's own server cannot listen on port 0 (it falls back to 9464), so its request
 * handler is served by a server of ours. Loaded only when the demo runs with `--metrics`.
 */
export async function startMetrics(): Promise<InstanceMetrics> {
  const [{ PrometheusExporter }, { MeterProvider }] = await Promise.all([
    import('@opentelemetry/exporter-prometheus'),
    import('@opentelemetry/sdk-metrics'),
  ]);
  const exporter = new PrometheusExporter({ preventServerStart: true });
  const provider = new MeterProvider({ readers: [exporter] });
  const server = createServer((request, response) => exporter.getMetricsRequestHandler(request, response));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  return {
    meter: provider.getMeter('sluice-demo'),
    port: (server.address() as AddressInfo).port,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await provider.shutdown();
    },
  };
}

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gcra } from '../../src/algorithms/gcra.js';
import type { Decision } from '../../src/decision.js';
import { InvalidKeyError } from '../../src/errors.js';
import type { Limiter } from '../../src/limiter.js';
import { instrument, storeMetrics } from '../../src/observability/index.js';
import { type InstanceMetrics, startMetrics } from './metrics.js';
import { findMode } from './modes.js';

/** How the parent configures one instance process (sent as JSON in argv). */
export interface InstanceConfig {
  /** A {@link FleetMode} name. */
  mode: string;
  limit: number;
  periodMs: number;
  /** Required when the mode uses Redis. */
  redisUrl?: string;
  prefix: string;
  /** Instrument the limiter and serve its metrics for Prometheus (`--metrics`). */
  metrics?: boolean;
}

/** The `sluice.limit` attribute of the demo's metrics. */
export const METRICS_NAME = 'fleet';

/** A running instance: an HTTP server on a loopback port, guarded by the mode's limiter. */
export interface Instance {
  readonly port: number;
  /** The port serving `/metrics` when started with `metrics`. */
  readonly metricsPort: number | undefined;
  close(): Promise<void>;
}

/**
 * Starts one fleet instance: `GET /?key=<client>` spends one unit of `key` and answers 200,
 * 429 with `Retry-After` (seconds), or 503 when the store could not decide.
 */
export async function startInstance(config: InstanceConfig): Promise<Instance> {
  const mode = findMode(config.mode);
  const redis = mode.usesRedis ? await connect(config.redisUrl) : undefined;
  const metrics = config.metrics ? await startMetrics() : undefined;
  const limiter = instrumented(
    mode.create({
      algorithm: gcra({ limit: config.limit, periodMs: config.periodMs }),
      redis,
      prefix: config.prefix,
      wrapClient: metrics && storeMetrics({ meter: metrics.meter, name: METRICS_NAME }),
    }),
    metrics,
  );
  const server = createServer((request, response) => {
    handle(limiter, request, response).catch((error: unknown) => {
      response.writeHead(500).end(String(error));
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  return {
    port: (server.address() as AddressInfo).port,
    metricsPort: metrics?.port,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await limiter.close();
      redis?.disconnect();
      await metrics?.close();
    },
  };
}

/** The limiter, counted on the instance's meter when there is one (a leased one reports its stats too). */
function instrumented(limiter: Limiter, metrics: InstanceMetrics | undefined): Limiter {
  return metrics ? instrument(limiter, { meter: metrics.meter, name: METRICS_NAME }) : limiter;
}

async function handle(limiter: Limiter, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const key = new URL(request.url ?? '/', 'http://instance').searchParams.get('key') ?? 'anonymous';
  let decision: Decision;
  try {
    decision = await limiter.limit(key);
  } catch (error) {
    const status = error instanceof InvalidKeyError ? 400 : 503;
    response.writeHead(status, { 'content-type': 'text/plain' }).end(String(error));
    return;
  }
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'ratelimit-remaining': String(decision.remaining),
  };
  if (!decision.allowed && Number.isFinite(decision.retryAfterMs)) {
    headers['retry-after'] = String(Math.ceil(decision.retryAfterMs / 1000));
  }
  response.writeHead(decision.allowed ? 200 : 429, headers).end(JSON.stringify({ allowed: decision.allowed }));
}

async function connect(url: string | undefined) {
  if (url === undefined) throw new Error('this mode needs a Redis URL');
  const { Redis } = await import('ioredis');
  const client = new Redis(url, { maxRetriesPerRequest: 1, lazyConnect: true });
  // Failures surface through the limiter as StoreUnavailableError; don't crash on the event.
  client.on('error', () => {});
  await client.connect();
  return client;
}

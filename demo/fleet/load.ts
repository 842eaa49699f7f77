import { Agent, request } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { LoadPattern } from './loads.js';

/** Per-instance counts of one load run. */
export interface LoadResult {
  /** Requests sent per instance, in port order. */
  readonly sent: readonly number[];
  /** 200s per instance. */
  readonly admitted: readonly number[];
  /** 429s per instance. */
  readonly denied: readonly number[];
  /** Anything else (503 from an unavailable store, connection errors) per instance. */
  readonly errors: readonly number[];
  readonly elapsedMs: number;
}

/**
 * Sends `requests` GETs for one client `key`, one at a time, to the instances on `ports` as
 * `load` spreads them, over one kept-alive connection each. Sequential on purpose: every row
 * sees the same order, so the counts are reproducible.
 */
export async function driveLoad(
  ports: readonly number[],
  requests: number,
  key: string,
  load: LoadPattern,
): Promise<LoadResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const sent = ports.map(() => 0);
  const admitted = ports.map(() => 0);
  const denied = ports.map(() => 0);
  const errors = ports.map(() => 0);
  const path = `/?key=${encodeURIComponent(key)}`;
  const pauseAt = load.pause?.before(ports.length) ?? -1;
  const started = performance.now();
  try {
    for (let i = 0; i < requests; i++) {
      if (i === pauseAt) await sleep(load.pause?.ms);
      const index = load.instanceFor(i, ports.length);
      sent[index] = (sent[index] as number) + 1;
      const status = await get(agent, ports[index] as number, path);
      const counts = status === 200 ? admitted : status === 429 ? denied : errors;
      counts[index] = (counts[index] as number) + 1;
    }
  } finally {
    agent.destroy();
  }
  return { sent, admitted, denied, errors, elapsedMs: performance.now() - started };
}

/** The status of one GET, or 0 when the request failed before an answer. */
function get(agent: Agent, port: number, path: string): Promise<number> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path, agent }, (response) => {
      response.resume();
      response.once('end', () => resolve(response.statusCode ?? 0));
    });
    req.once('error', () => resolve(0));
    req.end();
  });
}

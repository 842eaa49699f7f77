import { Agent, request } from 'node:http';

/** Per-instance counts of one load run. */
export interface LoadResult {
  /** 200s per instance, in port order. */
  readonly admitted: readonly number[];
  /** 429s per instance. */
  readonly denied: readonly number[];
  /** Anything else (503 from an unavailable store, connection errors) per instance. */
  readonly errors: readonly number[];
  readonly elapsedMs: number;
}

/**
 * Sends `requests` GETs for one client `key`, one at a time, round-robin over the instances
 * on `ports` (request i goes to instance i mod n), over one kept-alive connection each.
 * Sequential on purpose: every row sees the same order, so the counts are reproducible.
 */
export async function driveRoundRobin(ports: readonly number[], requests: number, key: string): Promise<LoadResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const admitted = ports.map(() => 0);
  const denied = ports.map(() => 0);
  const errors = ports.map(() => 0);
  const path = `/?key=${encodeURIComponent(key)}`;
  const started = performance.now();
  try {
    for (let i = 0; i < requests; i++) {
      const index = i % ports.length;
      const status = await get(agent, ports[index] as number, path);
      const counts = status === 200 ? admitted : status === 429 ? denied : errors;
      counts[index] = (counts[index] as number) + 1;
    }
  } finally {
    agent.destroy();
  }
  return { admitted, denied, errors, elapsedMs: performance.now() - started };
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

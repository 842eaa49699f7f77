import { once } from 'node:events';
import { createServer, type Server } from 'node:http';

/** What the fake third-party API saw. */
export interface UpstreamLog {
  /** Arrival times (ms, this process's monotonic clock) of the requests it served with 200. */
  served: number[];
  /** The callers' send times (epoch ms, `x-sent-at`) of every request, served or refused. */
  sent: number[];
  /** Requests it answered 429. */
  refused: number;
  /** Arrival times of the refused requests. */
  refusedAt: number[];
}

/** A real local HTTP server standing in for a third-party API that enforces its own limit. */
export interface FakeUpstream {
  readonly url: string;
  readonly log: UpstreamLog;
  /** Forgets every request seen, for the next run. */
  clear(): void;
  close(): Promise<void>;
}

export interface FakeUpstreamOptions {
  /** Requests served per rolling window; one more inside the window is answered 429. */
  limit: number;
  windowMs: number;
  /** Announce the limit in draft-11 `RateLimit-Policy` / `RateLimit` headers on every response. */
  announce?: boolean;
}

/**
 * Counts requests served in the rolling window ending at each arrival, (t − windowMs, t], as a
 * strict upstream does; over the limit it answers 429 with `Retry-After` (seconds until the
 * oldest served request leaves the window) and does not count the refused one.
 */
export async function startFakeUpstream(options: FakeUpstreamOptions): Promise<FakeUpstream> {
  const log: UpstreamLog = { served: [], sent: [], refused: 0, refusedAt: [] };
  let first = 0;
  const server: Server = createServer((request, response) => {
    const nowMs = performance.now();
    request.resume();
    // Callers warm their HTTP client up here before a run: not counted, never refused.
    if (request.url === '/warm') return response.end();
    const sentAt = Number(request.headers['x-sent-at']);
    if (Number.isFinite(sentAt)) log.sent.push(sentAt);
    while (first < log.served.length && (log.served[first] as number) <= nowMs - options.windowMs) first++;
    const inWindow = log.served.length - first;
    const resetSeconds =
      inWindow === 0 ? 0 : Math.ceil(((log.served[first] as number) + options.windowMs - nowMs) / 1000);
    const headers: Record<string, string> = {};
    if (options.announce) {
      headers['RateLimit-Policy'] = `"upstream";q=${options.limit};w=${Math.ceil(options.windowMs / 1000)}`;
    }
    if (inWindow >= options.limit) {
      log.refused++;
      log.refusedAt.push(nowMs);
      if (options.announce) headers.RateLimit = `"upstream";r=0;t=${Math.max(1, resetSeconds)}`;
      response.writeHead(429, { ...headers, 'Retry-After': String(Math.max(1, resetSeconds)) });
    } else {
      log.served.push(nowMs);
      if (options.announce) headers.RateLimit = `"upstream";r=${options.limit - inWindow - 1};t=${resetSeconds}`;
      response.writeHead(200, headers);
    }
    response.end('{}');
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return {
    url: `http://127.0.0.1:${address.port}/`,
    log,
    clear() {
      log.served = [];
      log.sent = [];
      log.refused = 0;
      log.refusedAt = [];
      first = 0;
    },
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}

import { type HeaderReader, parseRateLimitHeaders, parseRetryAfter } from '../http/headers.js';
import type { Acquirer } from './acquirer.js';

/**
 * Response headers as `fetch`'s `Headers` (anything with `get`) or Node's `IncomingHttpHeaders`
 * (a record with lower-case names).
 */
export type HeaderSource =
  | { get(name: string): string | null }
  | Readonly<Record<string, string | readonly string[] | number | undefined>>;

/** What a throttled call's response says about the upstream's limit. */
export interface UpstreamResponse {
  status: number;
  headers: HeaderSource;
}

/** What Sluice takes from one upstream response. */
export interface UpstreamSignal {
  /** How long (ms) the upstream asked every caller to stop; 0 when it did not. */
  pauseMs: number;
  /** The lowest rate (units per ms) the upstream announced, when it announced one. */
  ratePerMs: number | undefined;
}

/** A 429 or 503 that names no wait pauses this long. */
const DEFAULT_PAUSE_MS = 1000;

/**
 * Share of an announced rate an acquirer calls at: the margin docs/outbound.md tells users to
 * leave under a configured upstream (9.6/s for 10/s), so jitter between release and arrival is
 * absorbed for a learned rate too.
 */
const LEARNED_RATE_SHARE = 0.96;

function readerOf(headers: HeaderSource | undefined): HeaderReader {
  // A mapper that left `headers` out (or gave null) is a response with no headers: its status still counts.
  if (typeof headers !== 'object' || headers === null) return () => undefined;
  if (typeof headers.get === 'function') {
    const source = headers as { get(name: string): string | null };
    return (name) => source.get(name) ?? undefined;
  }
  const record = headers as Readonly<Record<string, string | readonly string[] | number | undefined>>;
  return (name) => {
    const value = record[name];
    // A repeated header is ambiguous: treated as absent, as any malformed value.
    return typeof value === 'string' ? value : typeof value === 'number' ? String(value) : undefined;
  };
}

/**
 * Reads a response: a 429 (or 503) pauses for its `Retry-After`, else until the readable reset
 * of an exhausted limit, else 1 s; any response announcing a limit with `remaining` 0 pauses until
 * its reset; the announced quota ÷ window gives the upstream's rate. Parsed by `sluice/http`'s own
 * header module, so what Sluice writes it reads; malformed values count as absent. `pauseMs` is
 * what the upstream asked, uncapped: the acquirer cuts it to its `maxPauseMs`.
 * @example
 * ```ts
 * import { readUpstream } from 'sluice/outbound';
 *
 * const response = await fetch('http://127.0.0.1:8080/items');
 * const { pauseMs } = readUpstream(response, Date.now()); // a 429 with Retry-After: 2 gives 2000
 * ```
 */
export function readUpstream(response: UpstreamResponse, epochNowMs: number): UpstreamSignal {
  const read = readerOf(response.headers);
  const limits = parseRateLimitHeaders(read, epochNowMs);
  // An exhausted limit whose reset is unreadable says nothing about the wait: a refusal then
  // pauses the default, as one that names no wait at all.
  const resets = limits.flatMap((limit) =>
    limit.remaining === 0 && limit.resetSeconds !== undefined ? [limit.resetSeconds * 1000] : [],
  );
  const exhaustedMs = resets.length > 0 ? Math.max(...resets) : undefined;
  const refused = response.status === 429 || response.status === 503;
  const pauseMs = refused
    ? (parseRetryAfter(read('retry-after'), epochNowMs) ?? exhaustedMs ?? DEFAULT_PAUSE_MS)
    : (exhaustedMs ?? 0);
  const rates = limits.flatMap((limit) =>
    limit.quota !== undefined && limit.windowSeconds !== undefined ? [limit.quota / (limit.windowSeconds * 1000)] : [],
  );
  return { pauseMs, ratePerMs: rates.length > 0 ? Math.min(...rates) : undefined };
}

/**
 * Applies what a response said to `key`: pauses it fleet-wide for the upstream's wait, at most
 * the acquirer's `maxPauseMs` (a 429 or 503 always; a served call announcing an exhausted limit
 * only when it names no rate), and follows an announced rate, less a 4 % margin, by charging more units per call. The learned rate replaces the
 * last one learned and holds `maxPauseMs` unless a response repeats it. A rate higher than the
 * acquirer's is followed only when it has `followHigherRates` (and a `unitCost` above 1 to leave
 * room): the limiter's own rate stays the ceiling.
 * @example
 * ```ts
 * import { createMemoryLimiter, gcra } from 'sluice';
 * import { createAcquirer, learnFromUpstream } from 'sluice/outbound';
 *
 * const acquirer = createAcquirer(createMemoryLimiter({ algorithm: gcra({ limit: 10, periodMs: 1000 }) }));
 * await acquirer.acquire('partner-api');
 * const response = await fetch('http://127.0.0.1:8080/items');
 * learnFromUpstream(acquirer, 'partner-api', response); // a 429 pauses 'partner-api' for every caller
 * ```
 */
export function learnFromUpstream(acquirer: Acquirer, key: string, response: UpstreamResponse): UpstreamSignal {
  const signal = readUpstream(response, Date.now());
  // A served call that announces both its rate and "0 remaining" is the learned rate at work:
  // the acquirer already spaces calls at that rate, and pausing to a reset rounded up to whole
  // seconds would stop the fleet once per window. A refusal always pauses.
  const refused = response.status === 429 || response.status === 503;
  if (signal.pauseMs > 0 && (refused || signal.ratePerMs === undefined)) acquirer.pause(key, Math.ceil(signal.pauseMs));
  // The acquirer raises the factor to its unitCost (or, with followHigherRates, 1) at least. The
  // tolerance keeps an exact ratio (9.6/s against 5/s less 4 %: 2) from rounding up a whole unit.
  if (signal.ratePerMs !== undefined && signal.ratePerMs > 0) {
    const ratio = acquirer.ratePerMs / (signal.ratePerMs * LEARNED_RATE_SHARE);
    acquirer.scale(key, Math.min(Number.MAX_SAFE_INTEGER, Math.max(1, Math.ceil(ratio - 1e-9))));
  }
  return signal;
}

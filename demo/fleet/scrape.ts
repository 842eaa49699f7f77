import { parseExposition, quantileOf, type Sample, sumOf } from './exposition.js';

/** What one instance's `/metrics` said after a row's load: the scrape summary's numbers. */
export interface ScrapedInstance {
  /** `sluice_decisions_total` by outcome. */
  allowed: number;
  denied: number;
  degraded: number;
  /** `sluice_store_duration_count`: Redis round trips timed; null when the limiter has no store metrics (memory). */
  storeRoundTrips: number | null;
  /** The 99th percentile of `sluice_store_duration`, in milliseconds, estimated from its buckets; null without samples. */
  storeP99Ms: number | null;
  /** `sluice_lease_local_hits_total` and `sluice_lease_remote_calls_total`; null when the limiter does not lease. */
  leaseLocalHits: number | null;
  leaseRemoteCalls: number | null;
}

/** GETs `http://127.0.0.1:<port>/metrics` and reads the numbers of the summary from it. */
export async function scrapeInstance(port: number): Promise<ScrapedInstance> {
  const response = await fetch(`http://127.0.0.1:${port}/metrics`);
  if (!response.ok) throw new Error(`scraping 127.0.0.1:${port}/metrics: HTTP ${response.status}`);
  return summarize(parseExposition(await response.text()));
}

/** The summary's numbers from an instance's samples. */
export function summarize(samples: readonly Sample[]): ScrapedInstance {
  const decisions = (outcome: string) => sumOf(samples, 'sluice_decisions_total', { sluice_outcome: outcome }) ?? 0;
  const p99Seconds = quantileOf(samples, 'sluice_store_duration', 0.99);
  return {
    allowed: decisions('allowed'),
    denied: decisions('denied'),
    degraded: decisions('degraded'),
    storeRoundTrips: sumOf(samples, 'sluice_store_duration_count') ?? null,
    storeP99Ms: p99Seconds === undefined ? null : p99Seconds * 1000,
    leaseLocalHits: sumOf(samples, 'sluice_lease_local_hits_total') ?? null,
    leaseRemoteCalls: sumOf(samples, 'sluice_lease_remote_calls_total') ?? null,
  };
}

import { formatInteger, formatTable } from '../../bench/lib/table.mjs';
import type { FleetReport, FleetRow } from './run.js';

/** The fleet tables (one per load pattern) and what they show, as text for a terminal. */
export function formatFleetReport(report: FleetReport): string {
  const { requests, limit, instances } = report;
  const lines = [
    `${instances} instances, ${formatInteger(requests)} requests per row from one client, ` +
      `limit ${formatInteger(limit)} per ${formatPeriod(report.periodMs)} (GCRA, burst ${formatInteger(limit)})`,
    report.redis
      ? `Redis ${report.redis.version} at ${report.redis.url}${report.redis.startedHere ? ' (started for this run, stopped after)' : ''}`
      : 'Redis: none',
  ];
  for (const load of report.loads) {
    const rows = report.rows.filter((row) => row.load === load.name);
    const sent = rows.find((row) => row.ran)?.sentPerInstance;
    lines.push(
      '',
      `Load: ${load.label}${sent ? ` (requests per instance: ${sent.map(formatInteger).join(' / ')})` : ''}`,
      '',
      formatTable(
        [
          { header: 'mode' },
          { header: 'admitted', align: 'right' },
          { header: 'vs limit', align: 'right' },
          { header: 'admitted per instance' },
          { header: 'denied', align: 'right' },
          { header: 'errors', align: 'right' },
          { header: 'Redis round trips', align: 'right' },
          { header: 'per request', align: 'right' },
        ],
        rows.map((row) => cells(row, limit, requests)),
      ),
    );
    if (rows.some((row) => row.scraped)) lines.push('', ...scrapeSummary(rows));
  }
  lines.push('', ...explanations(report));
  return lines.join('\n');
}

function explanations(report: FleetReport): string[] {
  const { limit, requests, instances } = report;
  const row = (load: string, mode: string) =>
    report.rows.find((each) => each.load === load && each.mode === mode && each.ran);
  const notes: string[] = [];
  const memory = row('round-robin', 'memory');
  if (memory) {
    notes.push(
      `Each memory limiter sees only its own 1/${instances} of the traffic and admits up to ${formatInteger(limit)}: ` +
        `the fleet admitted ${formatInteger(memory.admitted)}, ${(memory.admitted / limit).toFixed(1)}× the limit.`,
    );
  }
  const shared = row('round-robin', 'redis');
  if (shared && shared.redisRoundTrips !== null) {
    notes.push(
      `One GCRA state in Redis, shared by every instance: ${formatInteger(shared.admitted)} admitted, ` +
        `at ${(shared.redisRoundTrips / requests).toFixed(3)} round trips per request (counted by INFO commandstats).`,
    );
  }
  if (report.rows.some((each) => each.mode.startsWith('leased') && each.ran)) {
    notes.push(
      'Leasing takes quota from Redis in blocks and spends it locally: one round trip buys up to a lease of decisions, ' +
        'and a refusal is cached, so denials cost no round trip. Units leased by an instance that then goes quiet are ' +
        'stranded (under-admission of Σ max(0, lease − requests) over quiet instances) until they are returned.',
    );
  }
  return notes;
}

/** What each instance's `/metrics` said (`--metrics`): one line per instance of each row. */
function scrapeSummary(rows: readonly FleetRow[]): string[] {
  const count = (value: number | null) => (value === null ? '—' : formatInteger(value));
  const lines = rows.flatMap((row) =>
    (row.scraped ?? []).map((instance, i) => [
      row.label,
      String(i + 1),
      formatInteger(instance.allowed),
      formatInteger(instance.denied),
      count(instance.storeRoundTrips),
      instance.storeP99Ms === null ? '—' : `${instance.storeP99Ms.toFixed(2)} ms`,
      count(instance.leaseLocalHits),
      count(instance.leaseRemoteCalls),
    ]),
  );
  return [
    "Scrape summary: each instance's Prometheus /metrics (sluice/otel) read after the load",
    '',
    formatTable(
      [
        { header: 'mode' },
        { header: 'instance', align: 'right' },
        { header: 'allowed', align: 'right' },
        { header: 'denied', align: 'right' },
        { header: 'store round trips', align: 'right' },
        { header: 'store p99', align: 'right' },
        { header: 'lease hits', align: 'right' },
        { header: 'remote calls', align: 'right' },
      ],
      lines,
    ),
  ];
}

function cells(row: FleetRow, limit: number, requests: number): string[] {
  if (!row.ran) return [row.label, '', '', 'skipped: no Redis', '', '', '', ''];
  return [
    row.label,
    formatInteger(row.admitted),
    `${(row.admitted / limit).toFixed(2)}×`,
    row.admittedPerInstance.map(formatInteger).join(' / '),
    formatInteger(row.denied),
    formatInteger(row.errors),
    row.redisRoundTrips === null ? '—' : formatInteger(row.redisRoundTrips),
    row.redisRoundTrips === null ? '—' : (row.redisRoundTrips / requests).toFixed(3),
  ];
}

function formatPeriod(periodMs: number): string {
  const units: [number, string][] = [
    [86_400_000, 'day'],
    [3_600_000, 'hour'],
    [60_000, 'minute'],
    [1000, 'second'],
  ];
  for (const [ms, name] of units) {
    if (periodMs === ms) return name;
    if (periodMs % ms === 0) return `${periodMs / ms} ${name}s`;
  }
  return `${formatInteger(periodMs)} ms`;
}

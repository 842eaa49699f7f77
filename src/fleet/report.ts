import type { FleetReport, FleetRow } from './run.js';
import { formatInteger, formatTable } from './table.js';

/** The fleet table and what it shows, as text for a terminal. */
export function formatFleetReport(report: FleetReport): string {
  const { requests, limit, instances } = report;
  const title =
    `${instances} instances, ${formatInteger(requests)} requests round-robin from one client, ` +
    `limit ${formatInteger(limit)} per ${formatPeriod(report.periodMs)} (GCRA, burst ${formatInteger(limit)})`;
  const redis = report.redis
    ? `Redis ${report.redis.version} at ${report.redis.url}${report.redis.startedHere ? ' (started for this run, stopped after)' : ''}`
    : 'Redis: none';
  const table = formatTable(
    [
      { header: 'mode' },
      { header: 'admitted', align: 'right' },
      { header: 'vs limit', align: 'right' },
      { header: 'per instance' },
      { header: 'denied', align: 'right' },
      { header: 'errors', align: 'right' },
      { header: 'Redis round trips', align: 'right' },
      { header: 'per request', align: 'right' },
    ],
    report.rows.map((row) => cells(row, limit, requests)),
  );
  const lines = [title, redis, '', table, ''];
  const memory = report.rows.find((row) => row.mode === 'memory' && row.ran);
  const shared = report.rows.find((row) => row.mode === 'redis' && row.ran);
  if (memory) {
    lines.push(
      `Each memory limiter sees only its own 1/${instances} of the traffic and admits up to ${formatInteger(limit)}: ` +
        `the fleet admitted ${formatInteger(memory.admitted)}, ${(memory.admitted / limit).toFixed(1)}× the limit.`,
    );
  }
  if (shared && shared.redisRoundTrips !== null) {
    lines.push(
      `One GCRA state in Redis, shared by every instance: ${formatInteger(shared.admitted)} admitted, ` +
        `at ${(shared.redisRoundTrips / requests).toFixed(3)} round trips per request (counted by INFO commandstats).`,
    );
  }
  return lines.join('\n');
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

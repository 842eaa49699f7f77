/*
 * Cost of sluice/otel per decision: a memory GCRA decision (limitSync and limit) and a Redis GCRA
 * decision (one loopback round trip) with `instrument()` (and `storeMetrics()` for Redis) on the
 * real OpenTelemetry SDK — a PeriodicExportingMetricReader exporting every second to an
 * in-memory exporter, so collection runs during timing — beside the same limiter without it.
 * The machine may be loaded: both limiters live in one process and are timed in alternating
 * batches, so each pair runs milliseconds apart; medians of the pairs' ratios, then over fresh
 * processes. The counters must equal the decisions made before a result counts. Without a meter
 * nothing is wrapped: the limiter is the one the factory returned.
 */
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import { Redis } from 'ioredis';
import { do_not_optimize } from 'mitata';
import { createMemoryLimiter, gcra } from 'sluice';
import { instrument, METRICS, storeMetrics } from 'sluice/otel';
import { createRedisLimiter } from 'sluice/redis';
import { environment, formatEnvironment } from './lib/environment.mjs';
import { withRedisServer } from './lib/redis-server.mjs';
import { saveResults } from './lib/results.mjs';
import { formatTable } from './lib/table.mjs';
import { check, median, runVariants, sendResult, variantName } from './lib/variants.mjs';

const ROUNDS = 5;
const PAIRS = 31;
const MEMORY_BATCH = 50_000;
const REDIS_BATCH = 300;
const KEYS = 10_000;
const algorithm = gcra({ limit: 1_000_000_000, periodMs: 3_600_000 });

function sdk() {
  const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 1000 });
  const provider = new MeterProvider({ readers: [reader] });
  return { meter: provider.getMeter('sluice-bench'), reader, provider, exporter };
}

/** The cumulative `sluice.decisions` total the SDK collects now. */
async function decisionsCounted(reader) {
  const { resourceMetrics } = await reader.collect();
  let total = 0;
  for (const scope of resourceMetrics.scopeMetrics) {
    for (const metric of scope.metrics) {
      if (metric.descriptor.name === METRICS.decisions) for (const p of metric.dataPoints) total += p.value;
    }
  }
  return total;
}

/** [min, max] of numbers. */
const rangeOf = (values) => [Math.min(...values), Math.max(...values)];

/** CPU time of this process (user + system), µs: time spent waiting for a core does not count. */
const cpuUs = () => {
  const { user, system } = process.cpuUsage();
  return user + system;
};

/**
 * Times `off` and `on` in the same process, in alternating batches (a pair runs milliseconds
 * apart, so a loaded machine slows both alike): per pair `on ÷ off`, then medians over PAIRS
 * pairs after one warm-up pair. `batch(subject)` returns { cpuNs, wallNs } per call.
 */
async function paired(subjects, batch) {
  /** @type {{ off: Timing[], on: Timing[], cpuRatio: number[], wallRatio: number[] }} */
  const rows = { off: [], on: [], cpuRatio: [], wallRatio: [] };
  for (let pair = 0; pair <= PAIRS; pair++) {
    const order = pair % 2 === 0 ? ['off', 'on'] : ['on', 'off'];
    const times = {};
    for (const name of order) times[name] = await batch(subjects[name]);
    if (pair === 0) continue;
    rows.off.push(times.off);
    rows.on.push(times.on);
    rows.cpuRatio.push(times.on.cpuNs / times.off.cpuNs);
    rows.wallRatio.push(times.on.wallNs / times.off.wallNs);
  }
  const of = (list, field) => median(list.map((t) => t[field]));
  return {
    off: { cpuNs: of(rows.off, 'cpuNs'), wallNs: of(rows.off, 'wallNs') },
    on: { cpuNs: of(rows.on, 'cpuNs'), wallNs: of(rows.on, 'wallNs') },
    cpuOverhead: median(rows.cpuRatio) - 1,
    wallOverhead: median(rows.wallRatio) - 1,
  };
}

/** @typedef {{ cpuNs: number, wallNs: number }} Timing */

/** ns per call of `calls` calls of `call` (awaited when `sync` is false). */
async function batchOf(call, calls, sync) {
  const cpu = cpuUs();
  const wall = performance.now();
  if (sync) for (let i = 0; i < calls; i++) do_not_optimize(call());
  else for (let i = 0; i < calls; i++) do_not_optimize(await call());
  return { cpuNs: ((cpuUs() - cpu) * 1000) / calls, wallNs: ((performance.now() - wall) * 1e6) / calls };
}

/** A key cycler over `count` keys that counts the decisions it hands out. */
function cycler(count) {
  const keys = Array.from({ length: count }, (_, i) => `user:${i}`);
  let i = 0;
  const next = () => {
    next.made++;
    const key = keys[i];
    i = i + 1 === count ? 0 : i + 1;
    return key;
  };
  next.made = 0;
  return next;
}

/**
 * `control`: the "with" limiter is a second plain one, so the figure is this machine's noise
 * floor (what a 0 % overhead measures as) beside the instrumented rows.
 */
async function timeMemory(sync, control = false) {
  const otel = sdk();
  const plain = createMemoryLimiter({ algorithm, maxKeys: KEYS });
  const other = createMemoryLimiter({ algorithm, maxKeys: KEYS });
  const instrumented = control ? other : instrument(other, { meter: otel.meter, name: 'bench' });
  const keys = { off: cycler(KEYS), on: cycler(KEYS) };
  const decide = (limiter, next) => (sync ? () => limiter.limitSync(next()) : () => limiter.limit(next()));
  const subjects = { off: decide(plain, keys.off), on: decide(instrumented, keys.on) };
  const result = await paired(subjects, (call) => batchOf(call, MEMORY_BATCH, sync));
  const counted = await decisionsCounted(otel.reader);
  const expected = control ? 0 : keys.on.made;
  check(counted === expected, `sluice.decisions counted ${counted} of ${expected} decisions`);
  await otel.provider.shutdown();
  return result;
}

async function timeRedis() {
  const otel = sdk();
  const { meter } = otel;
  const client = new Redis(String(process.env.BENCH_REDIS_URL));
  const plain = createRedisLimiter({ client, algorithm, prefix: 'otel-bench:off:' });
  const instrumented = instrument(
    createRedisLimiter({
      client,
      algorithm,
      prefix: 'otel-bench:on:',
      wrapClient: storeMetrics({ meter, name: 'bench' }),
    }),
    { meter, name: 'bench' },
  );
  const keys = { off: cycler(100), on: cycler(100) };
  const subjects = { off: () => plain.limit(keys.off()), on: () => instrumented.limit(keys.on()) };
  const result = await paired(subjects, (call) => batchOf(call, REDIS_BATCH, false));
  const counted = await decisionsCounted(otel.reader);
  check(counted === keys.on.made, `sluice.decisions counted ${counted} of ${keys.on.made} decisions`);
  await otel.provider.shutdown();
  client.disconnect();
  return result;
}

const VARIANTS = ['memory:sync', 'memory:sync:control', 'memory:async', 'redis'];

const variant = variantName();
if (variant !== undefined) {
  sendResult(
    variant === 'redis'
      ? await timeRedis()
      : await timeMemory(variant.startsWith('memory:sync'), variant === 'memory:sync:control'),
  );
} else {
  await main();
}

async function main() {
  const loadAtStart = loadavg();
  const file = fileURLToPath(import.meta.url);
  const memory = await runVariants(file, VARIANTS.slice(0, 3), { rounds: ROUNDS });
  const redis = await withRedisServer((server) =>
    runVariants(file, ['redis'], { rounds: ROUNDS, env: { ...process.env, BENCH_REDIS_URL: server.url } }),
  );
  const results = new Map([...memory, ...(redis ?? [])]);
  /** @type {[string, string, number][]} */
  const rows = [
    ['memory GCRA, limitSync()', 'memory:sync', 1],
    ['control: limitSync(), both plain', 'memory:sync:control', 1],
    ['memory GCRA, limit()', 'memory:async', 1],
  ];
  if (redis) rows.push(['Redis GCRA, limit() on loopback (µs)', 'redis', 1000]);
  const figures = rows.map(([label, name, scale]) => {
    const rounds = results.get(name);
    const of = (pick) => median(rounds.map(pick));
    return {
      label,
      cpu: {
        off: of((r) => r.off.cpuNs) / scale,
        on: of((r) => r.on.cpuNs) / scale,
        overhead: of((r) => r.cpuOverhead),
        range: rangeOf(rounds.map((r) => r.cpuOverhead)),
      },
      wall: {
        off: of((r) => r.off.wallNs) / scale,
        on: of((r) => r.on.wallNs) / scale,
        overhead: of((r) => r.wallOverhead),
        range: rangeOf(rounds.map((r) => r.wallOverhead)),
      },
      rounds,
    };
  });

  const env = environment();
  const load = (averages) => averages.map((average) => average.toFixed(2)).join(', ');
  console.log('## OpenTelemetry instrumentation\n');
  console.log(`${formatEnvironment(env)}\n`);
  console.log(`Load average (1, 5, 15 min): ${load(loadAtStart)} at the start, ${load(loadavg())} at the end.\n`);
  console.log(
    'Per decision, without and with instrument() (and storeMetrics() for Redis) on the real SDK, exported every ' +
      'second to an in-memory exporter. Both limiters in one process, timed in alternating batches ' +
      `(${MEMORY_BATCH.toLocaleString('en')} memory decisions on ${KEYS.toLocaleString('en')} keys, every one an admission; ` +
      `${REDIS_BATCH} sequential Redis decisions on 100 keys), ${PAIRS} pairs; overhead = median of the pairs' ` +
      `ratios, then the median (and range) over ${ROUNDS} fresh processes, run in alternating order. The control row ` +
      'times two plain limiters against each other: what 0 % measures as on this machine now. ' +
      "CPU: this process's user + system time (waiting for " +
      'a core does not count; for Redis, the client side only). Wall: elapsed time.\n',
  );
  const pct = (x) => `${(x * 100).toFixed(1)} %`;
  console.log(
    formatTable(
      [
        { header: 'decision' },
        { header: 'CPU ns without', align: 'right' },
        { header: 'with', align: 'right' },
        { header: 'CPU overhead (range)', align: 'right' },
        { header: 'wall ns without', align: 'right' },
        { header: 'with', align: 'right' },
        { header: 'wall overhead (range)', align: 'right' },
      ],
      figures.map(({ label, cpu, wall }) => [
        label,
        cpu.off.toFixed(1),
        cpu.on.toFixed(1),
        `${pct(cpu.overhead)} (${pct(cpu.range[0])} … ${pct(cpu.range[1])})`,
        wall.off.toFixed(1),
        wall.on.toFixed(1),
        `${pct(wall.overhead)} (${pct(wall.range[0])} … ${pct(wall.range[1])})`,
      ]),
    ),
  );
  const sync = figures[0].cpu;
  console.log(
    `\nTarget: ≤ 5 % on the memory GCRA decision (limitSync, CPU): ${pct(sync.overhead)} ` +
      `(${sync.overhead <= 0.05 ? 'met' : 'missed'}; rounds ${pct(sync.range[0])} … ${pct(sync.range[1])}). ` +
      'Without a meter nothing is wrapped: 0 extra work.\n',
  );
  const path = saveResults('otel', {
    loadAverageAtStart: loadAtStart,
    environment: env,
    method: { rounds: ROUNDS, pairs: PAIRS, memoryBatch: MEMORY_BATCH, redisBatch: REDIS_BATCH, keys: KEYS },
    figures,
  });
  console.log(`Saved ${path}\n`);
}

/*
 * The algorithm family, side by side: ns per decision on the memory store (1 hot key; 100k keys)
 * beside the floor (Map get + set + one clock read) measured in the same run; bytes per key in
 * memory (heap delta, --expose-gc) and in Redis (MEMORY USAGE; the log per admitted entry);
 * Redis latency, throughput with 1,000 in flight and round trips per decision; and the sliding
 * window counter's error against the exact log on replayed traces. Fresh process per timed
 * variant, alternating order, medians; every implementation passes a check before it is timed.
 */
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { do_not_optimize, measure } from 'mitata';
import { createMemoryLimiter, fixedWindow, gcra, slidingWindowCounter, slidingWindowLog, tokenBucket } from 'sluice';
import { createRedisLimiter } from 'sluice/redis';
import { readCommandStats, roundTripsBetween } from './lib/commandstats.mjs';
import { environment, envOf, formatEnvironment } from './lib/environment.mjs';
import { withRedisServer } from './lib/redis-server.mjs';
import { saveResults } from './lib/results.mjs';
import { formatInteger, formatTable } from './lib/table.mjs';
import { check, median, runVariants, sendResult, variantName } from './lib/variants.mjs';

const HOUR = 3_600_000;
const KEYS = 100_000;
const ROUNDS = 3;
const MIN_CPU_NS = 500e6;
const LOG_SIZED = { limit: 1000, keys: 10_000 };

/** Each algorithm with `limit` per hour (the log's limit is capped: its state is one slot per unit). */
const ALGORITHMS = {
  gcra: (limit) => gcra({ limit, periodMs: HOUR }),
  'token-bucket': (limit) => tokenBucket({ capacity: limit, rate: limit, periodMs: HOUR }),
  'fixed-window': (limit) => fixedWindow({ limit, windowMs: HOUR }),
  'sliding-window-counter': (limit) => slidingWindowCounter({ limit, windowMs: HOUR }),
  'sliding-window-log': (limit) => slidingWindowLog({ limit: Math.min(limit, 1000), windowMs: HOUR }),
};
const NAMES = Object.keys(ALGORITHMS);
// Limits per hour: every timed decision is an admission, except the log's hot key (1,000 per
// hour: after the first 1,000 it times the denial path, a binary search over 1,000 timestamps).
const LIMIT = { hot: 1_000_000_000, keys: 10_000, keysLog: 200, sized: 100 };

const keyOf = (i) => `user:${i}`;

/** Each algorithm admits limit 5 at once and denies the 6th, on its own terms. */
function checkAlgorithms() {
  for (const name of NAMES) {
    const now = 0;
    const limiter = createMemoryLimiter({ algorithm: ALGORITHMS[name](5), clock: () => now });
    check(limiter.limitSync('k', { cost: 5 }).allowed, `${name} admits its limit at once`);
    const denied = limiter.limitSync('k');
    check(!denied.allowed && denied.retryAfterMs > 0 && denied.remaining === 0, `${name} denies the 6th request`);
  }
}

function createSubject(name, limit, keyCount) {
  if (name === 'floor') {
    const map = new Map();
    return {
      decide(key) {
        const now = performance.now();
        const last = map.get(key);
        map.set(key, (last === undefined ? now : last) + 1);
        return last;
      },
      verify: () => check(map.size === keyCount, `the floor holds ${keyCount} keys`),
    };
  }
  checkAlgorithms();
  const limiter = createMemoryLimiter({ algorithm: ALGORITHMS[name](limit), maxKeys: Math.max(keyCount, 2) });
  return {
    decide: (key) => limiter.limitSync(key),
    verify() {
      check(limiter.size === keyCount, `${name} holds all ${keyCount} keys`);
      const probe = limiter.peekSync(keyOf(0));
      const exhausted = name === 'sliding-window-log' && keyCount === 1;
      check(exhausted ? !probe.allowed : probe.allowed, `${name}: ${exhausted ? 'denials' : 'admissions'} timed`);
    },
  };
}

async function timeDecisions(name, keyCount) {
  const limit = keyCount === 1 ? LIMIT.hot : name === 'sliding-window-log' ? LIMIT.keysLog : LIMIT.keys;
  const subject = createSubject(name, limit, keyCount);
  const keys = Array.from({ length: keyCount }, (_, i) => keyOf(i));
  for (const key of keys) subject.decide(key);
  let i = 0;
  const step = () => {
    const key = keys[i];
    i = i + 1 === keyCount ? 0 : i + 1;
    return do_not_optimize(subject.decide(key));
  };
  const stats = await measure(step, { min_cpu_time: MIN_CPU_NS });
  const cpuNsPerOp = cpuNsPerDecision(step);
  subject.verify();
  return { cpuNsPerOp, nsPerOp: stats.avg, p50: stats.p50, p99: stats.p99 };
}

/**
 * CPU ns per decision (process.cpuUsage, every thread, so GC counts): on cores shared with other
 * work, wall time inflates with every runnable process, CPU time far less.
 */
function cpuNsPerDecision(step) {
  const cpuNs = () => {
    const { user, system } = process.cpuUsage();
    return (user + system) * 1000;
  };
  let decisions = 0;
  const started = cpuNs();
  while (cpuNs() - started < MIN_CPU_NS) {
    for (let n = 0; n < 10_000; n++) step();
    decisions += 10_000;
  }
  return (cpuNs() - started) / decisions;
}

/** Heap + array-buffer bytes per key after one decision on each of `keyCount` keys (key strings excluded). */
function bytesPerKey(name, limit, keyCount) {
  const subject = createSubject(name, limit, keyCount);
  const keys = Array.from({ length: keyCount }, (_, i) => keyOf(i));
  const usage = () => {
    /** @type {() => void} */ (globalThis.gc)();
    /** @type {() => void} */ (globalThis.gc)();
    const { heapUsed, arrayBuffers } = process.memoryUsage();
    return heapUsed + arrayBuffers;
  };
  const before = usage();
  for (const key of keys) subject.decide(key);
  const after = usage();
  do_not_optimize(subject);
  do_not_optimize(keys);
  return { bytesPerKey: (after - before) / keyCount, keys: keyCount, limit };
}

/* ---------------------------------------------------------------- Redis */

const REDIS = { limit: 1000, sequential: 3000, inFlight: 1000, throughputDecisions: 30_000, keyspace: 10_000 };

async function measureRedis(kind, name) {
  const redis = new Redis(envOf('BENCH_REDIS_URL'), { maxRetriesPerRequest: 1 });
  const prefix = `bench:${process.pid}:`;
  const probe = createRedisLimiter({ client: redis, algorithm: ALGORITHMS[name](5), prefix: `${prefix}check:` });
  check((await probe.limit('k', { cost: 5 })).allowed, `${name} on Redis admits 5`);
  check(!(await probe.limit('k')).allowed, `${name} on Redis denies the 6th`);
  const limiter = createRedisLimiter({ client: redis, algorithm: ALGORITHMS[name](REDIS.limit), prefix });
  const decide = (key) => limiter.limit(key);
  for (let i = 0; i < 1000; i++) await decide(`warm:${i}`);
  const before = await readCommandStats(redis);
  let decisions;
  let result;
  if (kind === 'latency') {
    decisions = REDIS.sequential;
    const micros = new Float64Array(decisions);
    for (let i = 0; i < decisions; i++) {
      const started = performance.now();
      const decision = await decide(keyOf(i % REDIS.keyspace));
      micros[i] = (performance.now() - started) * 1000;
      check(decision.allowed, 'every timed decision is an admission');
    }
    micros.sort();
    result = { p50Us: micros[Math.floor(decisions / 2)], p99Us: micros[Math.floor(decisions * 0.99)] };
  } else {
    decisions = REDIS.throughputDecisions;
    let issued = 0;
    const worker = async () => {
      while (issued < decisions) await decide(keyOf(issued++ % REDIS.keyspace));
    };
    const started = performance.now();
    await Promise.all(Array.from({ length: REDIS.inFlight }, worker));
    result = { decisionsPerSecond: decisions / ((performance.now() - started) / 1000) };
  }
  const after = await readCommandStats(redis);
  return { ...result, roundTripsPerDecision: roundTripsBetween(before, after) / decisions };
}

/** MEMORY USAGE of one key per algorithm after one decision; the log per admitted entry. */
async function redisBytes(redis) {
  await redis.flushall();
  const sample = 'user:12345';
  const bytes = {};
  for (const name of NAMES) {
    // The default prefix names the algorithm, so key names differ in length; 's:' isolates the value.
    const usage = {};
    for (const prefix of [`sluice:${name}:`, 's:']) {
      const limiter = createRedisLimiter({ client: redis, algorithm: ALGORITHMS[name](100), prefix });
      await limiter.limit(sample);
      const key = `${prefix}{${sample}}`;
      check((await redis.pttl(key)) > 0, `${name} key has a TTL`);
      usage[key] = await redis.memory('USAGE', key);
      await redis.del(key);
    }
    const [defaultKey, shortKey] = Object.keys(usage);
    bytes[name] = { key: defaultKey, memoryUsage: usage[defaultKey], shortKey, shortKeyMemoryUsage: usage[shortKey] };
  }
  // The log: one member per millisecond with admissions; listpack up to 128 entries, then a skiplist.
  let now = Date.now();
  const log = createRedisLimiter({
    client: redis,
    algorithm: slidingWindowLog({ limit: LOG_SIZED.limit, windowMs: HOUR }),
    prefix: 'entries:',
    clock: () => now,
  });
  const fill = async (key) => {
    const usageAt = {};
    for (let n = 1; n <= LOG_SIZED.limit; n++) {
      now += 1;
      check((await log.limit(key)).allowed, `log entry ${n} admitted`);
      if (n === 1 || n === 128 || n === LOG_SIZED.limit) {
        usageAt[n] = await redis.memory('USAGE', `entries:{${key}}`, 'SAMPLES', 0);
      }
    }
    return { usageAt, encoding: await redis.object('ENCODING', `entries:{${key}}`) };
  };
  const byDefault = await fill(sample);
  // The server's choice, not Sluice's: a listpack up to `limit` entries trades CPU for memory.
  const [, listpackMax] = await redis.config('GET', 'zset-max-listpack-entries');
  await redis.config('SET', 'zset-max-listpack-entries', String(LOG_SIZED.limit));
  const raised = await fill('user:67890');
  await redis.config('SET', 'zset-max-listpack-entries', listpackMax);
  bytes['sliding-window-log'].entries = {
    limit: LOG_SIZED.limit,
    usageAt: byDefault.usageAt,
    encodingAtLimit: byDefault.encoding,
    perEntryListpack: (byDefault.usageAt[128] - byDefault.usageAt[1]) / 127,
    perEntryAtLimit: byDefault.usageAt[LOG_SIZED.limit] / LOG_SIZED.limit,
    listpackAtLimit: raised.usageAt[LOG_SIZED.limit],
    listpackEncoding: raised.encoding,
  };
  return bytes;
}

/* ---------------------------------------------------------------- counter vs log */

/** A seeded PRNG (mulberry32), so the traces and their figures are reproducible. */
function random(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const TRACE = { limit: 100, windowMs: 60_000, windows: 50 };

/** Request times (ms) of three traces over 50 windows, limit 100 per 60 s. */
function traces() {
  const { limit, windowMs, windows } = TRACE;
  const end = windows * windowMs;
  const poisson = (next, rate) => {
    const times = [];
    for (let t = 0; t < end; t += Math.max(1, Math.round(-Math.log(1 - next()) / rate))) times.push(t);
    return times;
  };
  const steady = poisson(random(1), (1.5 * limit) / windowMs);
  const bursty = [];
  {
    const next = random(2);
    // 8 s bursts at 10× the limit's rate, 37 s apart: their phase drifts across window boundaries.
    for (let start = 0; start < end; start += 37_000) {
      for (
        let t = start;
        t < start + 8000;
        t += Math.max(1, Math.round(-Math.log(1 - next()) / ((10 * limit) / windowMs)))
      ) {
        bursty.push(t);
      }
    }
  }
  // Adversarial for the counter: 2 × limit within one second, in the last second of even
  // windows and the 59th of odd ones, so each burst lands 59 s after one the counter already
  // weighs as if it had been spread over its window. The request at 0 opens the first window.
  const adversarial = [0];
  for (let w = 0; w < windows; w++) {
    const from = w * windowMs + (w % 2 === 0 ? windowMs - 1000 : windowMs - 2000);
    for (let i = 0; i < 2 * limit; i++) adversarial.push(from + Math.floor((i * 1000) / (2 * limit)));
  }
  return {
    'steady (Poisson, 1.5 × limit)': steady,
    'bursty (8 s at 10 ×, every 37 s)': bursty,
    'adversarial (bursts 59 s apart)': adversarial,
  };
}

/** Most units admitted within any windowMs interval. */
function worstWindow(admittedAt, windowMs) {
  let worst = 0;
  for (let lo = 0, hi = 0; hi < admittedAt.length; hi++) {
    while (admittedAt[hi] - admittedAt[lo] >= windowMs) lo++;
    worst = Math.max(worst, hi - lo + 1);
  }
  return worst;
}

function counterError() {
  const { limit, windowMs } = TRACE;
  const rows = [];
  for (const [name, times] of Object.entries(traces())) {
    let now = 0;
    const clock = () => now;
    const log = createMemoryLimiter({ algorithm: slidingWindowLog({ limit, windowMs }), clock, pruneIntervalMs: 0 });
    const counter = createMemoryLimiter({
      algorithm: slidingWindowCounter({ limit, windowMs }),
      clock,
      pruneIntervalMs: 0,
    });
    /** @type {{ log: number[], counter: number[] }} */
    const admitted = { log: [], counter: [] };
    let differ = 0;
    let counterOnly = 0;
    for (const t of times) {
      now = t;
      const byLog = log.limitSync('k').allowed;
      const byCounter = counter.limitSync('k').allowed;
      if (byLog) admitted.log.push(t);
      if (byCounter) admitted.counter.push(t);
      if (byLog !== byCounter) differ++;
      if (byCounter && !byLog) counterOnly++;
    }
    check(worstWindow(admitted.log, windowMs) <= limit, 'the log never exceeds its limit');
    rows.push({
      trace: name,
      requests: times.length,
      admittedLog: admitted.log.length,
      admittedCounter: admitted.counter.length,
      differingPercent: (100 * differ) / times.length,
      counterOnly,
      logOnly: differ - counterOnly,
      worstWindowCounter: worstWindow(admitted.counter, windowMs),
    });
  }
  return rows;
}

/* ---------------------------------------------------------------- orchestration */

const TIMED = ['floor', ...NAMES].flatMap((name) => [`time:${name}:1`, `time:${name}:${KEYS}`]);
const SIZED = [
  ...['floor', ...NAMES].map((name) => `bytes:${name}:${LIMIT.sized}:${KEYS}`),
  `bytes:sliding-window-log:${LOG_SIZED.limit}:${LOG_SIZED.keys}`,
];
const REDIS_VARIANTS = ['latency', 'throughput'].flatMap((kind) => NAMES.map((name) => `redis-${kind}:${name}`));

const variant = variantName();
if (variant !== undefined) {
  const [kind, name, a, b] = variant.split(':');
  if (kind === 'time') sendResult(await timeDecisions(name, Number(a)));
  else if (kind === 'bytes') sendResult(bytesPerKey(name, Number(a), Number(b)));
  else sendResult(await measureRedis(kind.slice('redis-'.length), name));
} else {
  await main();
}

async function main() {
  const file = fileURLToPath(import.meta.url);
  const timed = await runVariants(file, TIMED, { rounds: ROUNDS, execArgv: ['--expose-gc'] });
  const sized = await runVariants(file, SIZED, { rounds: 1, execArgv: ['--expose-gc'] });
  const ns = (name, keys) => median(timed.get(`time:${name}:${keys}`).map((r) => r.cpuNsPerOp));
  const wallNs = (name, keys) => median(timed.get(`time:${name}:${keys}`).map((r) => r.nsPerOp));
  const heap = (name, limit = LIMIT.sized, keys = KEYS) => sized.get(`bytes:${name}:${limit}:${keys}`)[0].bytesPerKey;

  const redisResults = await withRedisServer(async (server) => {
    const measured = await runVariants(file, REDIS_VARIANTS, {
      rounds: ROUNDS,
      env: { ...process.env, BENCH_REDIS_URL: server.url },
    });
    const redis = new Redis(server.url);
    const bytes = await redisBytes(redis);
    redis.disconnect();
    return { measured, bytes, version: server.version };
  });
  const errors = counterError();

  const env = environment(redisResults ? { 'redis-server': redisResults.version } : {});
  console.log('## Algorithms\n');
  console.log(`${formatEnvironment(env)}\n`);
  console.log(
    `Memory store, CPU ns per decision (limitSync; process.cpuUsage over ≥ ${MIN_CPU_NS / 1e6} ms of CPU, after a mitata ` +
      `run whose wall-clock average is the last columns), median of ${ROUNDS} fresh processes in alternating order; the floor ` +
      `is a Map get + set + performance.now() in the same run. Limits per hour: ` +
      `${formatInteger(LIMIT.hot)} on the hot key, ${formatInteger(LIMIT.keys)} on ${formatInteger(KEYS)} keys (log: ` +
      `${LIMIT.keysLog}), so every decision is an admission, except the log's hot key (limit 1,000: denials after the first 1,000). ` +
      `Bytes per key: heap + array buffers after one decision on each of ${formatInteger(KEYS)} keys, key strings excluded ` +
      `(the slot table's typed arrays grow by doubling, so this includes its headroom).\n`,
  );
  const floor = { hot: ns('floor', 1), keys: ns('floor', KEYS) };
  console.log(
    formatTable(
      [
        { header: 'algorithm' },
        { header: '1 hot key, CPU ns', align: 'right' },
        { header: '÷ floor', align: 'right' },
        { header: `${formatInteger(KEYS)} keys, CPU ns`, align: 'right' },
        { header: '÷ floor', align: 'right' },
        { header: 'bytes / key', align: 'right' },
        { header: 'wall ns: 1 key', align: 'right' },
        { header: `${formatInteger(KEYS)} keys`, align: 'right' },
      ],
      ['floor', ...NAMES].map((name) => [
        name,
        ns(name, 1).toFixed(1),
        (ns(name, 1) / floor.hot).toFixed(2),
        ns(name, KEYS).toFixed(1),
        (ns(name, KEYS) / floor.keys).toFixed(2),
        heap(name).toFixed(1),
        wallNs(name, 1).toFixed(1),
        wallNs(name, KEYS).toFixed(1),
      ]),
    ),
  );
  const logLarge = heap('sliding-window-log', LOG_SIZED.limit, LOG_SIZED.keys);
  console.log(
    `\nSliding window log at limit ${formatInteger(LOG_SIZED.limit)} (${formatInteger(LOG_SIZED.keys)} keys): ` +
      `${formatInteger(Math.round(logLarge))} B per key (8 × (limit + 2) = ${formatInteger(8 * (LOG_SIZED.limit + 2))} B of state, reserved up front).\n`,
  );

  if (redisResults) {
    const { measured, bytes } = redisResults;
    const of = (kind, name, field) => median(measured.get(`redis-${kind}:${name}`).map((r) => r[field]));
    console.log(
      `Redis store, one ioredis connection per process, limit ${formatInteger(REDIS.limit)} per hour over ${formatInteger(REDIS.keyspace)} keys ` +
        `(every decision an admission): sequential p50 over ${formatInteger(REDIS.sequential)} awaited decisions; ` +
        `${formatInteger(REDIS.throughputDecisions)} decisions ${formatInteger(REDIS.inFlight)} at a time; round trips from INFO commandstats. ` +
        `MEMORY USAGE of \`sluice:<algorithm>:{user:12345}\` after one decision (limit 100).\n`,
    );
    console.log(
      formatTable(
        [
          { header: 'algorithm' },
          { header: 'p50, µs', align: 'right' },
          { header: 'p99, µs', align: 'right' },
          { header: `${formatInteger(REDIS.inFlight)} in flight, decisions/s`, align: 'right' },
          { header: 'round trips / decision', align: 'right' },
          { header: 'MEMORY USAGE, B', align: 'right' },
          { header: 'with key `s:{user:12345}`, B', align: 'right' },
        ],
        NAMES.map((name) => [
          name,
          of('latency', name, 'p50Us').toFixed(1),
          of('latency', name, 'p99Us').toFixed(1),
          formatInteger(of('throughput', name, 'decisionsPerSecond')),
          of('latency', name, 'roundTripsPerDecision').toFixed(3),
          String(bytes[name].memoryUsage),
          String(bytes[name].shortKeyMemoryUsage),
        ]),
      ),
    );
    const entries = bytes['sliding-window-log'].entries;
    console.log(
      `\nSliding window log in Redis, one member per millisecond with admissions: ${entries.usageAt[1]} B with 1 entry, ` +
        `${entries.usageAt[128]} B with 128 (listpack, ${entries.perEntryListpack.toFixed(1)} B per entry), ` +
        `${formatInteger(entries.usageAt[LOG_SIZED.limit])} B with ${formatInteger(LOG_SIZED.limit)} (${entries.encodingAtLimit}, ` +
        `${entries.perEntryAtLimit.toFixed(1)} B per entry); with the server's zset-max-listpack-entries raised to ` +
        `${formatInteger(LOG_SIZED.limit)}: ${formatInteger(entries.listpackAtLimit)} B (${entries.listpackEncoding}).\n`,
    );
  }

  console.log(
    `Sliding window counter against the exact log, limit ${TRACE.limit} per ${TRACE.windowMs / 1000} s, ${TRACE.windows} windows, ` +
      'memory store, same request times (seeded).\n',
  );
  console.log(
    formatTable(
      [
        { header: 'trace' },
        { header: 'requests', align: 'right' },
        { header: 'admitted: log', align: 'right' },
        { header: 'counter', align: 'right' },
        { header: 'decisions that differ', align: 'right' },
        { header: 'counter only / log only', align: 'right' },
        { header: 'counter: most in any window', align: 'right' },
      ],
      errors.map((row) => [
        row.trace,
        formatInteger(row.requests),
        formatInteger(row.admittedLog),
        formatInteger(row.admittedCounter),
        `${row.differingPercent.toFixed(2)} %`,
        `${row.counterOnly} / ${row.logOnly}`,
        `${row.worstWindowCounter} (${(row.worstWindowCounter / TRACE.limit).toFixed(2)} × limit)`,
      ]),
    ),
  );

  const path = saveResults('algorithms', {
    environment: env,
    method: {
      keys: KEYS,
      limit: LIMIT,
      rounds: ROUNDS,
      minCpuNs: MIN_CPU_NS,
      logSized: LOG_SIZED,
      redis: REDIS,
      trace: TRACE,
    },
    memory: Object.fromEntries(
      ['floor', ...NAMES].map((name) => [
        name,
        {
          cpuNsHotKey: ns(name, 1),
          cpuNsKeys100k: ns(name, KEYS),
          wallNsHotKey: wallNs(name, 1),
          wallNsKeys100k: wallNs(name, KEYS),
          bytesPerKey: heap(name),
          rounds: { hotKey: timed.get(`time:${name}:1`), keys100k: timed.get(`time:${name}:${KEYS}`) },
        },
      ]),
    ),
    logBytesPerKeyAtLimit1000: logLarge,
    redis: redisResults
      ? Object.fromEntries(
          NAMES.map((name) => [
            name,
            {
              rounds: {
                latency: redisResults.measured.get(`redis-latency:${name}`),
                throughput: redisResults.measured.get(`redis-throughput:${name}`),
              },
              memoryUsage: redisResults.bytes[name],
            },
          ]),
        )
      : null,
    counterVersusLog: errors,
  });
  console.log(`\nSaved ${path}\n`);
}

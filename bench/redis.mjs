/*
 * Redis store: Sluice's GCRA script beside rate-limiter-flexible's RateLimiterRedis, both on
 * ioredis and on the same redis-server (started here on a free port): sequential latency,
 * throughput with 1,000 decisions in flight, Redis round trips and commands per decision
 * (INFO commandstats), and bytes per key (MEMORY USAGE, and used_memory over 100k keys).
 * Then one hot key at 1,000 in flight and 1e9 per hour: the Redis limiter plain and batched,
 * and leased over each, in the same run.
 */
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { RateLimiterRedis } from 'rate-limiter-flexible';
import { createLeasedLimiter, gcra } from 'sluice';
import { createRedisLimiter } from 'sluice/redis';
import { commandsBetween, readCommandStats, roundTripsBetween } from './lib/commandstats.mjs';
import { environment, envOf, formatEnvironment } from './lib/environment.mjs';
import { withRedisServer } from './lib/redis-server.mjs';
import { saveResults } from './lib/results.mjs';
import { formatInteger, formatTable } from './lib/table.mjs';
import { check, median, runVariants, sendResult, variantName } from './lib/variants.mjs';

// Every timed decision is an admission (a key sees at most a few), and every key lives for seconds.
const LIMIT = 1000;
const PERIOD_MS = 3_600_000;
const ROUNDS = 3;
const SEQUENTIAL = 3000;
const IN_FLIGHT = 1000;
const THROUGHPUT_DECISIONS = 30_000;
const KEYSPACE = 10_000;
const SIZED_KEYS = 100_000;
// One hot key at a per-key rate whose emission interval (3.6 µs) is shorter than a round trip.
const HOT_RATE = { limit: 1_000_000_000, periodMs: PERIOD_MS };
const HOT_DECISIONS = 200_000;
const HOT_ROUNDS = 5;

/**
 * The hot-key limiters: Redis plain and batched, and leased over each. At lease 100 a lease's
 * units (0.36 ms) expire before a round trip, so the leased limiter passes through: the first
 * caller straight to Redis, those behind it queued for one call (docs/leasing.md); at lease
 * 10,000 (36 ms) it leases.
 */
const HOT = {
  plain: { label: 'Redis GCRA', create: (redis, prefix) => hotRemote(redis, prefix, false) },
  batched: { label: 'Redis GCRA, `batch: true`', create: (redis, prefix) => hotRemote(redis, prefix, true) },
  leased: {
    label: 'leased, lease 100, over Redis (pass-through)',
    create: (redis, prefix) =>
      createLeasedLimiter({ remote: hotRemote(redis, prefix, false), leaseSize: 100, onWarning: false }),
  },
  leasedBatched: {
    label: 'leased, lease 100, over Redis `batch: true` (pass-through)',
    create: (redis, prefix) =>
      createLeasedLimiter({ remote: hotRemote(redis, prefix, true), leaseSize: 100, onWarning: false }),
  },
  leasedLarge: {
    label: 'leased, lease 10,000, over Redis (leases)',
    create: (redis, prefix) =>
      createLeasedLimiter({ remote: hotRemote(redis, prefix, false), leaseSize: 10_000, onWarning: false }),
  },
};

function hotRemote(redis, prefix, batch) {
  return createRedisLimiter({ client: redis, algorithm: gcra(HOT_RATE), prefix, batch });
}

/** One caller at a time on the hot key: what pass-through adds to a decision when nothing queues. */
async function measureHotSequential(name) {
  const redis = new Redis(envOf('BENCH_REDIS_URL'), { maxRetriesPerRequest: 1 });
  const limiter = HOT[name].create(redis, `bench:hotseq:${process.pid}:`);
  for (let i = 0; i < 2000; i++) await limiter.limit('warm');
  const micros = new Float64Array(SEQUENTIAL);
  for (let i = 0; i < SEQUENTIAL; i++) {
    const started = performance.now();
    check((await limiter.limit('hot')).allowed, `${name}: a sequential decision admitted`);
    micros[i] = (performance.now() - started) * 1000;
  }
  check(limiter.stats === undefined || limiter.stats().leases === 0, `${name}: one caller at a time, no lease`);
  return { meanUs: micros.reduce((a, b) => a + b, 0) / SEQUENTIAL };
}

/** One hot-key variant: 1,000 callers in flight on one key, every decision admitted. */
async function measureHot(name) {
  const redis = new Redis(envOf('BENCH_REDIS_URL'), { maxRetriesPerRequest: 1 });
  const limiter = HOT[name].create(redis, `bench:hot:${process.pid}:`);
  const decideAll = async (key, decisions) => {
    let issued = 0;
    let admitted = 0;
    const worker = async () => {
      while (issued < decisions) {
        issued++;
        if ((await limiter.limit(key)).allowed) admitted++;
      }
    };
    await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
    check(admitted === decisions, `${name}: all ${decisions} decisions admitted`);
  };
  await decideAll('warm', 20_000);
  const before = await readCommandStats(redis);
  const calls = limiter.stats?.();
  const started = performance.now();
  await decideAll('hot', HOT_DECISIONS);
  const seconds = (performance.now() - started) / 1000;
  const after = await readCommandStats(redis);
  const stats = limiter.stats?.();
  return {
    decisions: HOT_DECISIONS,
    decisionsPerSecond: HOT_DECISIONS / seconds,
    roundTripsPerDecision: roundTripsBetween(before, after) / HOT_DECISIONS,
    ...(stats && {
      leasesPerDecision: (stats.leases - calls.leases) / HOT_DECISIONS,
      passedThroughPerDecision: (stats.passedThrough - calls.passedThrough) / HOT_DECISIONS,
    }),
  };
}

const IMPLEMENTATIONS = {
  sluice: {
    label: 'Sluice Redis GCRA, limit()',
    async create(redis, prefix, limit = LIMIT) {
      await checkSluice(redis, `${prefix}check:`);
      const limiter = createRedisLimiter({ client: redis, algorithm: gcra({ limit, periodMs: PERIOD_MS }), prefix });
      return (key) => limiter.limit(key);
    },
  },
  rlf: {
    label: 'rate-limiter-flexible RateLimiterRedis, consume()',
    async create(redis, prefix, limit = LIMIT) {
      await checkRlf(redis, `${prefix}check`);
      const limiter = new RateLimiterRedis({
        storeClient: redis,
        points: limit,
        duration: PERIOD_MS / 1000,
        keyPrefix: prefix,
      });
      return (key) => limiter.consume(key);
    },
  },
};

async function checkSluice(redis, prefix) {
  const limiter = createRedisLimiter({ client: redis, algorithm: gcra({ limit: 5, periodMs: 10_000 }), prefix });
  for (let i = 0; i < 5; i++) check((await limiter.limit('k')).allowed, `Sluice admission ${i + 1} of 5`);
  const denied = await limiter.limit('k');
  check(!denied.allowed && denied.retryAfterMs > 0 && denied.retryAfterMs <= 2000, 'Sluice denies the 6th request');
}

async function checkRlf(redis, prefix) {
  const limiter = new RateLimiterRedis({ storeClient: redis, points: 5, duration: 10, keyPrefix: prefix });
  for (let i = 0; i < 5; i++) await limiter.consume('k');
  const denied = await limiter.consume('k').then(
    () => undefined,
    (res) => res,
  );
  check(denied?.remainingPoints === 0, 'RateLimiterRedis denies the 6th request');
}

/** One variant in a fresh process: a correctness check, a warm-up, then the timed decisions. */
async function measureVariant(kind, implementation) {
  const redis = new Redis(envOf('BENCH_REDIS_URL'), { maxRetriesPerRequest: 1 });
  const decide = await IMPLEMENTATIONS[implementation].create(redis, `bench:${process.pid}:`);
  for (let i = 0; i < 1000; i++) await decide(`warm:${i}`);
  const before = await readCommandStats(redis);
  const result = kind === 'latency' ? await sequential(decide) : await inFlight(decide);
  const after = await readCommandStats(redis);
  return {
    ...result,
    roundTripsPerDecision: roundTripsBetween(before, after) / result.decisions,
    // The INFO that took `before` was issued on this connection after the warm-up: not a decision.
    commandsPerDecision: commandsBetween(before, after) / result.decisions,
  };
}

async function sequential(decide) {
  const micros = new Float64Array(SEQUENTIAL);
  for (let i = 0; i < SEQUENTIAL; i++) {
    const started = performance.now();
    const decision = await decide(`user:${i % KEYSPACE}`);
    micros[i] = (performance.now() - started) * 1000;
    if (decision.allowed === false) throw new Error('a timed decision was denied');
  }
  micros.sort();
  const at = (q) => micros[Math.min(SEQUENTIAL - 1, Math.floor(q * SEQUENTIAL))];
  return {
    decisions: SEQUENTIAL,
    p50Us: at(0.5),
    p99Us: at(0.99),
    meanUs: micros.reduce((a, b) => a + b, 0) / SEQUENTIAL,
  };
}

async function inFlight(decide) {
  let issued = 0;
  const worker = async () => {
    while (issued < THROUGHPUT_DECISIONS) await decide(`user:${issued++ % KEYSPACE}`);
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  const seconds = (performance.now() - started) / 1000;
  return { decisions: THROUGHPUT_DECISIONS, decisionsPerSecond: THROUGHPUT_DECISIONS / seconds };
}

/** MEMORY USAGE of one key, and used_memory per key over SIZED_KEYS keys, on an empty server. */
async function bytesPerKey(redis, implementation) {
  await redis.flushall();
  const prefix = implementation === 'sluice' ? 'sluice:gcra:' : 'rlflx';
  // 100 per hour: each key, decided once, lives 36 s (GCRA) or an hour (fixed window).
  const decide = await IMPLEMENTATIONS[implementation].create(redis, prefix, 100);
  await redis.flushall(); // drop the correctness check's keys
  const usedMemory = async () => Number(/used_memory:(\d+)/.exec(await redis.info('memory'))?.[1]);
  const before = await usedMemory();
  let next = 0;
  const worker = async () => {
    while (next < SIZED_KEYS) await decide(`user:${next++}`);
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  const after = await usedMemory();
  check((await redis.dbsize()) === SIZED_KEYS, `${SIZED_KEYS} keys stored`);
  const [sample] = await redis.keys(implementation === 'sluice' ? 'sluice:gcra:{user:12345}' : 'rlflx:user:12345');
  check(sample !== undefined, 'the sample key exists');
  return {
    sampleKey: sample,
    keyNameBytes: Buffer.byteLength(sample),
    memoryUsage: await redis.memory('USAGE', sample),
    usedMemoryPerKey: (after - before) / SIZED_KEYS,
    ttlSet: (await redis.pttl(sample)) > 0,
  };
}

const VARIANTS = ['latency', 'throughput'].flatMap((kind) =>
  Object.keys(IMPLEMENTATIONS).map((name) => `${kind}:${name}`),
);

const HOT_VARIANTS = [...Object.keys(HOT).map((name) => `hot:${name}`), 'hotseq:plain', 'hotseq:leased'];

const variant = variantName();
if (variant !== undefined) {
  const [kind, implementation] = variant.split(':');
  const measure = { hot: measureHot, hotseq: measureHotSequential }[kind];
  sendResult(measure ? await measure(implementation) : await measureVariant(kind, implementation));
} else {
  await withRedisServer(main);
}

async function main(server) {
  const file = fileURLToPath(import.meta.url);
  const timed = await runVariants(file, VARIANTS, {
    rounds: ROUNDS,
    env: { ...process.env, BENCH_REDIS_URL: server.url },
  });
  const hot = await runVariants(file, HOT_VARIANTS, {
    rounds: HOT_ROUNDS,
    env: { ...process.env, BENCH_REDIS_URL: server.url },
  });
  const redis = new Redis(server.url);
  const sized = {};
  for (const name of Object.keys(IMPLEMENTATIONS)) sized[name] = await bytesPerKey(redis, name);
  redis.disconnect();

  const of = (kind, name, field) => median(timed.get(`${kind}:${name}`).map((r) => r[field]));
  const env = environment({ 'redis-server': server.version });
  console.log('## Redis store\n');
  console.log(`${formatEnvironment(env)}\n`);
  console.log(
    `Both on one ioredis connection per process, against one redis-server on loopback. Sequential: ${formatInteger(SEQUENTIAL)} ` +
      `awaited decisions; in flight: ${formatInteger(THROUGHPUT_DECISIONS)} decisions, ${formatInteger(IN_FLIGHT)} at a time. ` +
      `Medians of ${ROUNDS} fresh processes in alternating order. Round trips and commands from INFO commandstats deltas.\n`,
  );
  const names = Object.keys(IMPLEMENTATIONS);
  console.log(
    formatTable(
      [
        { header: 'implementation' },
        { header: 'sequential p50, µs', align: 'right' },
        { header: 'p99, µs', align: 'right' },
        { header: `${formatInteger(IN_FLIGHT)} in flight, decisions/s`, align: 'right' },
        { header: 'round trips / decision', align: 'right' },
        { header: 'commands / decision', align: 'right' },
      ],
      names.map((name) => [
        IMPLEMENTATIONS[name].label,
        of('latency', name, 'p50Us').toFixed(1),
        of('latency', name, 'p99Us').toFixed(1),
        formatInteger(of('throughput', name, 'decisionsPerSecond')),
        of('latency', name, 'roundTripsPerDecision').toFixed(3),
        of('latency', name, 'commandsPerDecision').toFixed(2),
      ]),
    ),
  );
  const latencyRatio = of('latency', 'rlf', 'p50Us') / of('latency', 'sluice', 'p50Us');
  const throughputRatio =
    of('throughput', 'sluice', 'decisionsPerSecond') / of('throughput', 'rlf', 'decisionsPerSecond');
  console.log(
    `\nSluice ÷ RateLimiterRedis: p50 latency ${(1 / latencyRatio).toFixed(2)}×, throughput ${throughputRatio.toFixed(2)}× ` +
      '(RateLimiterRedis is a fixed window: INCRBY + PTTL; Sluice is GCRA: TIME, one MGET of the TAT and its block, SET with a TTL).\n',
  );
  console.log(
    `Bytes per key: MEMORY USAGE of one key; used_memory after − before ${formatInteger(SIZED_KEYS)} keys (includes the hash tables).\n`,
  );
  console.log(
    formatTable(
      [
        { header: 'store' },
        { header: 'key' },
        { header: 'key name, B', align: 'right' },
        { header: 'MEMORY USAGE, B', align: 'right' },
        { header: 'used_memory Δ / key, B', align: 'right' },
      ],
      names.map((name) => [
        IMPLEMENTATIONS[name].label.split(',')[0],
        `\`${sized[name].sampleKey}\``,
        String(sized[name].keyNameBytes),
        String(sized[name].memoryUsage),
        sized[name].usedMemoryPerKey.toFixed(1),
      ]),
    ),
  );
  const usage = sized.sluice.memoryUsage;
  console.log(`\nTarget: Redis key ≤ 72 B (MEMORY USAGE): ${usage} B (${usage <= 72 ? 'met' : 'missed'}).\n`);

  const hotKey = printHot(hot);

  const path = saveResults('redis', {
    environment: env,
    method: {
      limit: LIMIT,
      periodMs: PERIOD_MS,
      rounds: ROUNDS,
      sequential: SEQUENTIAL,
      inFlight: IN_FLIGHT,
      throughputDecisions: THROUGHPUT_DECISIONS,
      keyspace: KEYSPACE,
      sizedKeys: SIZED_KEYS,
    },
    decisions: Object.fromEntries(
      names.map((name) => [
        name,
        {
          sequentialP50Us: of('latency', name, 'p50Us'),
          sequentialP99Us: of('latency', name, 'p99Us'),
          decisionsPerSecondInFlight: of('throughput', name, 'decisionsPerSecond'),
          roundTripsPerDecision: of('latency', name, 'roundTripsPerDecision'),
          commandsPerDecision: of('latency', name, 'commandsPerDecision'),
          rounds: { latency: timed.get(`latency:${name}`), throughput: timed.get(`throughput:${name}`) },
        },
      ]),
    ),
    bytesPerKey: sized,
    hotKey: { rate: '1e9 per hour', inFlight: IN_FLIGHT, decisions: HOT_DECISIONS, rounds: HOT_ROUNDS, ...hotKey },
    targets: { redisKeyBytes: { target: 72, measured: usage } },
  });
  console.log(`Saved ${path}\n`);
}

/** The hot-key table: medians, and each variant's ratio to the batched limiter within each round. */
function printHot(hot) {
  const batched = hot.get('hot:batched');
  const rows = Object.keys(HOT).map((name) => {
    const rounds = hot.get(`hot:${name}`);
    const ratios = rounds.map((round, i) => round.decisionsPerSecond / batched[i].decisionsPerSecond);
    return {
      name,
      label: HOT[name].label,
      decisionsPerSecond: median(rounds.map((round) => round.decisionsPerSecond)),
      vsBatched: median(ratios),
      vsBatchedRange: [Math.min(...ratios), Math.max(...ratios)],
      roundTripsPerDecision: median(rounds.map((round) => round.roundTripsPerDecision)),
      leasesPerDecision: rounds[0].leasesPerDecision,
      rounds,
    };
  });
  console.log(
    `One hot key, ${formatInteger(IN_FLIGHT)} in flight, GCRA 1e9 per hour (T = 3.6 µs, shorter than a round trip): ` +
      `${formatInteger(HOT_DECISIONS)} decisions, every one admitted. Medians of ${HOT_ROUNDS} fresh processes in ` +
      'alternating order; "÷ batched" is the median of each round\'s ratio to the batched limiter of the same round.\n',
  );
  console.log(
    formatTable(
      [
        { header: 'limiter' },
        { header: 'decisions/s', align: 'right' },
        { header: '÷ batched (range)', align: 'right' },
        { header: 'round trips / decision', align: 'right' },
      ],
      rows.map((row) => [
        row.label,
        formatInteger(row.decisionsPerSecond),
        `${row.vsBatched.toFixed(2)}× (${row.vsBatchedRange.map((r) => r.toFixed(2)).join('–')})`,
        row.roundTripsPerDecision.toFixed(4),
      ]),
    ),
  );
  const sequential = (name) => hot.get(`hotseq:${name}`).map((round) => round.meanUs);
  const added = sequential('leased').map((us, i) => us / sequential('plain')[i]);
  console.log(
    `\nOne caller at a time on the hot key (${formatInteger(SEQUENTIAL)} awaited decisions, pass-through straight to Redis): ` +
      `Redis GCRA ${median(sequential('plain')).toFixed(1)} µs, leased ${median(sequential('leased')).toFixed(1)} µs a decision; ` +
      `leased ÷ Redis by round: ${median(added).toFixed(3)}× (${Math.min(...added).toFixed(3)}–${Math.max(...added).toFixed(3)}).\n`,
  );
  return { rows, sequential: { plainUs: sequential('plain'), leasedUs: sequential('leased'), ratio: median(added) } };
}

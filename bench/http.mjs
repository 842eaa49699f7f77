/*
 * HTTP: what a limiter adds to a request on Fastify 5 and Express 5. Scenarios: memory store on
 * one hot key and on 10k keys; Redis plain on one key and 10k keys, with Sluice's batched and
 * leased limiters beside it, and Sluice's fixed window on Redis plain (the peers' algorithm, so
 * algorithm cost and middleware overhead can be told apart); the denial path (limit 1, every timed request refused), on the
 * memory store and on Redis (Sluice plain against the peer's Redis store). Each
 * limiter runs in a fresh server process (bench/lib/http-server.mjs), loaded by autocannon from
 * this process; every round runs all runs of a framework in one order and the next round in the
 * reverse order. The 10k-key runs send each request from one of 10k client addresses in
 * X-Forwarded-For, which the framework and both limiters trust from the loopback proxy.
 *
 * Reported per run: req/s, p50/p99 latency, the server's CPU µs per request (process.cpuUsage
 * delta ÷ requests it saw), steadier than req/s on a shared machine, and the heap bytes it
 * allocated per request (used heap growth plus what each GC freed, from V8's GCProfiler); for
 * a run on Redis, the bench's redis-server's CPU per request too, which the server's leaves out.
 * "added" is a limiter's median minus the no-limiter median of the same framework and key mode;
 * "− peer": Sluice's CPU µs/req minus the peer's in the same round, median (range) over rounds.
 * Before timing, every limiter must admit exactly a small limit of one client's requests.
 *
 * Environment: HTTP_BENCH_FRAMEWORKS (fastify,express), HTTP_BENCH_SCENARIOS (all of
 * memory,memory-10k,redis,redis-10k,denial,redis-denial), HTTP_BENCH_SECONDS (default 2), HTTP_BENCH_ROUNDS
 * (default 3), HTTP_BENCH_WARMUP_SECONDS (default 3), HTTP_BENCH_PIN (frameworks whose server is
 * pinned to its own CPU, default express; 0: none; see lib/pinning.mjs), HTTP_BENCH_EXPRESS (stock: Express's
 * own server; default: requests and responses built with the app's prototypes, lib/express-prototypes.mjs), HTTP_BENCH_MAX_WAIT (0.3) and HTTP_BENCH_ATTEMPTS (1: no run is repeated),
 * see measureUnstarved; HTTP_BENCH_FIXED_WINDOW (1; 0 leaves out the fixed-window Redis rows).
 */
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { environment, formatEnvironment } from './lib/environment.mjs';
import { owned } from './lib/owned.mjs';
import { pinning } from './lib/pinning.mjs';
import { processCpuUs } from './lib/process-cpu.mjs';
import { withRedisServer } from './lib/redis-server.mjs';
import { saveResults } from './lib/results.mjs';
import { runQueueWaitUs } from './lib/run-queue.mjs';
import { formatInteger, formatTable } from './lib/table.mjs';
import { check, median } from './lib/variants.mjs';

const SERVER = fileURLToPath(new URL('./lib/http-server.mjs', import.meta.url));
const PEERS = { fastify: '@fastify/rate-limit', express: 'express-rate-limit' };
const listOf = (name, all) => {
  const wanted = (process.env[name] ?? all.join(',')).split(',').filter(Boolean);
  const unknown = wanted.filter((item) => !all.includes(item));
  check(unknown.length === 0, `${name}: unknown ${unknown.join(', ')}; known: ${all.join(', ')}`);
  return wanted;
};
// Sluice's fixed window on Redis plain beside its GCRA: about 40 s per framework.
const FIXED_WINDOW = process.env.HTTP_BENCH_FIXED_WINDOW === '0' ? [] : [['sluice', 'fixed']];
const SECONDS = Number(process.env.HTTP_BENCH_SECONDS ?? 2);
// A fresh Express server on a busy machine still spends its second and third second tiering
// up (100–400 CPU µs/req, then ~50): a 1 s warm-up left that in the timed window.
const WARMUP_SECONDS = Number(process.env.HTTP_BENCH_WARMUP_SECONDS ?? 3);
const ROUNDS = Number(process.env.HTTP_BENCH_ROUNDS ?? 3);
const MAX_WAIT = Number(process.env.HTTP_BENCH_MAX_WAIT ?? 0.3);
const ATTEMPTS = Number(process.env.HTTP_BENCH_ATTEMPTS ?? 1);
const CONNECTIONS = 64;
const HOT_LIMIT = 1_000_000_000;
const CHECK_LIMIT = 5;
const MANY_KEYS = 10_000;
const PIN = pinning(process.env.HTTP_BENCH_PIN ?? 'express');
// How the Express server builds requests and responses (lib/express-prototypes.mjs).
const EXPRESS_SERVER = process.env.HTTP_BENCH_EXPRESS === 'stock' ? 'stock' : 'prototypes';
const EXPRESS_TEXT =
  EXPRESS_SERVER === 'stock'
    ? "Express's stock server (app.handle changes every request's and response's prototype)"
    : "Express's requests and responses built with the app's prototypes (app.handle's prototype change a no-op; HTTP_BENCH_EXPRESS=stock: Express's own)";

/**
 * What each scenario compares. `runs`: [limiter, store] pairs; `keys`: client addresses the
 * load comes from; `denied`: every timed request is refused (limit 1, already spent).
 */
const SCENARIOS = {
  memory: {
    title: 'memory store, one hot key',
    keys: 1,
    runs: [
      ['sluice', 'memory'],
      ['peer', 'memory'],
    ],
  },
  'memory-10k': {
    title: 'memory store, 10k keys',
    keys: MANY_KEYS,
    runs: [
      ['sluice', 'memory'],
      ['peer', 'memory'],
    ],
  },
  redis: {
    title: 'Redis, one hot key',
    keys: 1,
    runs: [['sluice', 'redis'], ...FIXED_WINDOW, ['sluice', 'batch'], ['sluice', 'leased'], ['peer', 'redis']],
    redis: true,
  },
  'redis-10k': {
    title: 'Redis, 10k keys',
    keys: MANY_KEYS,
    runs: [['sluice', 'redis'], ...FIXED_WINDOW, ['sluice', 'batch'], ['peer', 'redis']],
    redis: true,
  },
  denial: {
    title: 'denial path (limit 1, spent), memory store, one hot key',
    keys: 1,
    denied: true,
    runs: [
      ['sluice', 'memory'],
      ['peer', 'memory'],
    ],
  },
  'redis-denial': {
    title: 'denial path (limit 1, spent), Redis, one hot key',
    keys: 1,
    denied: true,
    runs: [
      ['sluice', 'redis'],
      ['peer', 'redis'],
    ],
    redis: true,
  },
};
const FRAMEWORKS = listOf('HTTP_BENCH_FRAMEWORKS', Object.keys(PEERS));
const SCENARIO_NAMES = listOf('HTTP_BENCH_SCENARIOS', Object.keys(SCENARIOS));

/** A client address per key: 10.x.y.z, one per request in turn. */
const addresses = Array.from({ length: MANY_KEYS }, (_, i) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`);

async function startServer(run, limit, redisUrl) {
  const env = {
    ...process.env,
    HTTP_FRAMEWORK: run.framework,
    HTTP_LIMITER: run.limiter,
    HTTP_STORE: run.store,
    HTTP_LIMIT: String(limit),
    HTTP_PROXY: run.keys > 1 ? '1' : '0',
    BENCH_REDIS_URL: redisUrl ?? '',
  };
  const child = owned(fork(SERVER, [], { env, stdio: ['ignore', 'inherit', 'inherit', 'ipc'], ...run.forkOptions }));
  const exited = once(child, 'exit').then(([code]) => {
    throw new Error(`${run.id}: the server exited (${code}) before it listened`);
  });
  const [{ port }] = await Promise.race([once(child, 'message'), exited]);
  exited.catch(() => {}); // a later exit is the stop below
  const ask = async (message) => {
    child.send(message);
    const [reply] = await once(child, 'message');
    return reply;
  };
  const stop = async () => {
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    await exited;
  };
  return { url: `http://127.0.0.1:${port}/`, ask, stop };
}

/** autocannon's options for a run: with many keys, each request comes from the next address. */
function load(url, keys, duration) {
  if (keys === 1) return { url, connections: CONNECTIONS, duration };
  let next = 0;
  const setupRequest = (request) => ({
    ...request,
    headers: { 'x-forwarded-for': addresses[next++ % keys] },
  });
  return { url, connections: CONNECTIONS, duration, requests: [{ setupRequest }] };
}

/** Correctness before timing: of limit + 3 requests from one client, exactly `limit` pass. */
async function admitsExactlyTheLimit(run, redisUrl) {
  const server = await startServer(run, CHECK_LIMIT, redisUrl);
  try {
    let admitted = 0;
    /** @type {Record<string, string>} */
    const headers = run.keys > 1 ? { 'x-forwarded-for': `${addresses[7]}` } : {};
    for (let i = 0; i < CHECK_LIMIT + 3; i++) {
      const response = await fetch(server.url, { headers });
      await response.arrayBuffer();
      if (response.status === 200) admitted++;
      else check(response.status === 429, `${run.id} answered ${response.status}`);
    }
    check(admitted === CHECK_LIMIT, `${run.id} admitted ${admitted} of limit ${CHECK_LIMIT}`);
    if (run.keys > 1) {
      // Keyed by the forwarded client, not the proxy: another client still has its own limit.
      const other = await fetch(server.url, { headers: { 'x-forwarded-for': addresses[8] } });
      await other.arrayBuffer();
      check(other.status === 200, `${run.id} keys by the X-Forwarded-For client`);
    }
  } finally {
    await server.stop();
  }
}

async function measure(run, redisUrl, redisPid) {
  const server = await startServer(run, run.denied ? 1 : HOT_LIMIT, redisUrl);
  try {
    await autocannon(load(server.url, run.keys, WARMUP_SECONDS)); // JIT; spends a denial run's one unit
    const loadWaitUs = runQueueWaitUs();
    const redisCpuUs = usesRedis(run) ? processCpuUs(redisPid) : undefined;
    await server.ask('start');
    const result = await autocannon(load(server.url, run.keys, SECONDS));
    const reading = await server.ask('stop');
    const redisUsedUs = redisCpuUs === undefined ? undefined : (processCpuUs(redisPid) ?? 0) - redisCpuUs;
    const loadWaitedUs = loadWaitUs === undefined ? undefined : (runQueueWaitUs() ?? 0) - loadWaitUs;
    check(result.errors === 0 && result.timeouts === 0, `${run.id}: no errors or timeouts`);
    const expected = run.denied ? result['4xx'] === result.requests.total : result.non2xx === 0;
    check(expected, `${run.id}: every timed request is ${run.denied ? 'refused' : 'admitted'}`);
    return {
      reqPerSec: result.requests.average,
      p50Ms: result.latency.p50,
      p99Ms: result.latency.p99,
      cpuUsPerReq: reading.cpuUs / reading.requests,
      // The Redis server's CPU per request (all the bench's clients' commands): 10 ms ticks.
      redisCpuUsPerReq: redisUsedUs === undefined ? undefined : redisUsedUs / result.requests.total,
      // Near 1 when the server is the bottleneck; well below, autocannon or the machine is.
      busy: reading.cpuUs / reading.wallUs,
      // The larger share of the run the server or autocannon spent runnable but off a CPU.
      waited:
        reading.waitUs === undefined || loadWaitedUs === undefined
          ? undefined
          : Math.max(reading.waitUs, loadWaitedUs) / reading.wallUs,
      bytesPerReq: reading.heap.bytes / reading.requests,
      gcsPer10kReq: (reading.heap.collections * 10_000) / reading.requests,
    };
  } finally {
    await server.stop();
  }
}

/**
 * A run in which the server or autocannon spent more than MAX_WAIT of its time runnable but
 * waiting for a CPU (Linux's run-queue wait) was starved by other processes: the server then
 * serves fewer requests per wake-up, and its CPU µs/req grows with the machine's load (up to 4×
 * on a busy machine) rather than with what it runs. With HTTP_BENCH_ATTEMPTS above 1 such a run
 * is run again, up to ATTEMPTS in all, and the least starved attempt is kept. Off by default: on a
 * machine busy for minutes most runs stay starved and the section takes up to ATTEMPTS times as
 * long. Without /proc/self/schedstat nothing is repeated.
 */
async function measureUnstarved(run, redisUrl, redisPid) {
  let kept;
  let attempts = 0;
  while (attempts < ATTEMPTS) {
    const result = await measure(run, redisUrl, redisPid);
    attempts++;
    if (kept === undefined || (result.waited ?? 0) < (kept.waited ?? 0)) kept = result;
    if (result.waited === undefined || result.waited <= MAX_WAIT) break;
  }
  return { ...kept, attempts };
}

// Read from node_modules: express-rate-limit's exports leave out its package.json.
const packageVersion = (name) =>
  JSON.parse(readFileSync(new URL(`../node_modules/${name}/package.json`, import.meta.url), 'utf8')).version;

const range = (values, digits = 0) => `${Math.min(...values).toFixed(digits)}–${Math.max(...values).toFixed(digits)}`;
const signed = (value) => `${value >= 0 ? '+' : ''}${value.toFixed(1)}`;

/** Every run of a framework: the scenarios' limiters and a no-limiter baseline per key mode. */
function runsOf(framework, forkOptions) {
  const runs = new Map();
  const add = (limiter, store, keys, denied) => {
    const id = `${framework}/${limiter}/${store}/${keys === 1 ? '1 key' : `${keys} keys`}${denied ? '/denial' : ''}`;
    if (!runs.has(id)) runs.set(id, { id, framework, limiter, store, keys, denied, forkOptions, results: [] });
    return runs.get(id);
  };
  const scenarios = SCENARIO_NAMES.map((name) => {
    const scenario = SCENARIOS[name];
    return {
      ...scenario,
      baseline: add('none', 'memory', scenario.keys, false),
      runs: scenario.runs.map(([limiter, store]) => add(limiter, store, scenario.keys, scenario.denied)),
    };
  });
  return { runs: [...runs.values()], scenarios };
}

const usesRedis = (run) => ['redis', 'fixed', 'batch', 'leased'].includes(run.store);
const SLUICE_STORES = {
  redis: 'Redis plain',
  fixed: 'fixed window, Redis plain',
  batch: 'Redis batch',
};

const label = (framework, run) =>
  run.limiter === 'none'
    ? 'no limiter'
    : run.limiter === 'peer'
      ? `${PEERS[framework]} (${run.store})`
      : `Sluice (${SLUICE_STORES[run.store] ?? run.store})`;

function scenarioTable(framework, scenario) {
  const medianOf = (run, field) => median(run.results.map((result) => result[field]));
  const base = scenario.baseline;
  const peer = scenario.runs.find((run) => run.limiter === 'peer');
  const added = (run, field) => medianOf(run, field) - medianOf(base, field);
  const rows = [base, ...scenario.runs].map((run) => {
    const cpu = run.results.map((result) => result.cpuUsPerReq);
    const rps = run.results.map((result) => result.reqPerSec);
    const isBase = run === base;
    // Rounds pair up (each round runs every limiter once): Sluice's CPU minus the peer's, per round.
    const gaps =
      run.limiter === 'sluice' && peer
        ? run.results.map((result, round) => result.cpuUsPerReq - peer.results[round].cpuUsPerReq)
        : [];
    const versusPeer =
      gaps.length > 0 ? `${signed(median(gaps))} (${signed(Math.min(...gaps))} to ${signed(Math.max(...gaps))})` : '';
    return [
      label(framework, run),
      `${formatInteger(median(rps))} (${range(rps)})`,
      medianOf(run, 'p50Ms').toFixed(0),
      medianOf(run, 'p99Ms').toFixed(0),
      `${medianOf(run, 'cpuUsPerReq').toFixed(1)} (${range(cpu, 1)})`,
      isBase ? '' : signed(added(run, 'cpuUsPerReq')),
      versusPeer,
      formatInteger(medianOf(run, 'bytesPerReq')),
      isBase ? '' : signed(added(run, 'bytesPerReq')).slice(0, -2),
      medianOf(run, 'gcsPer10kReq').toFixed(1),
      run.results[0]?.redisCpuUsPerReq === undefined ? '' : medianOf(run, 'redisCpuUsPerReq').toFixed(1),
      run.results[0]?.waited === undefined ? '' : `${Math.round(medianOf(run, 'waited') * 100)} %`,
    ];
  });
  return `### ${framework === 'fastify' ? 'Fastify' : 'Express'} ${packageVersion(framework)}: ${scenario.title}\n\n${formatTable(
    [
      { header: 'limiter' },
      { header: 'req/s median (range)', align: 'right' },
      { header: 'p50 ms', align: 'right' },
      { header: 'p99 ms', align: 'right' },
      { header: 'CPU µs/req (range)', align: 'right' },
      { header: 'added µs/req', align: 'right' },
      { header: 'µs/req − peer (rounds)', align: 'right' },
      { header: 'heap B/req', align: 'right' },
      { header: 'added B/req', align: 'right' },
      { header: 'GCs/10k req', align: 'right' },
      { header: 'Redis CPU µs/req', align: 'right' },
      { header: 'waited', align: 'right' },
    ],
    rows,
  )}`;
}

async function bench(redisUrl, redisPid) {
  const results = {};
  const pinned = {};
  const sections = [];
  for (const framework of FRAMEWORKS) {
    const pin = PIN.forFramework(framework, redisPid);
    pinned[framework] = pin.pinned;
    const { runs, scenarios } = runsOf(framework, pin.forkOptions);
    const timed = runs.filter((run) => redisUrl !== undefined || !usesRedis(run));
    for (const run of timed) if (run.limiter !== 'none') await admitsExactlyTheLimit(run, redisUrl);
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? timed : [...timed].reverse();
      for (const run of order) run.results.push(await measureUnstarved(run, redisUrl, redisPid));
    }
    results[framework] = Object.fromEntries(timed.map((run) => [run.id, run.results]));
    for (const scenario of scenarios) {
      if (scenario.runs.every((run) => timed.includes(run))) sections.push(scenarioTable(framework, scenario));
    }
  }
  return { results, pinned, sections };
}

const loadAtStart = loadavg();
const needsRedis = SCENARIO_NAMES.some((name) => SCENARIOS[name].redis);
const { results, pinned, sections } = needsRedis
  ? ((await withRedisServer((server) => bench(server.url, server.pid))) ?? (await bench(undefined, undefined)))
  : await bench(undefined, undefined);

const env = environment({
  fastify: packageVersion('fastify'),
  '@fastify/rate-limit': packageVersion('@fastify/rate-limit'),
  express: packageVersion('express'),
  'express-rate-limit': packageVersion('express-rate-limit'),
  'rate-limit-redis': packageVersion('rate-limit-redis'),
  autocannon: packageVersion('autocannon'),
});
function starvedText() {
  const kept = Object.values(results).flatMap((runs) => Object.values(runs).flat());
  if (kept.some((result) => result.waited === undefined)) return 'no run-queue wait readings, so no run repeated';
  const repeated = kept.filter((result) => result.attempts > 1).length;
  const starved = kept.filter((result) => result.waited > MAX_WAIT).length;
  const waited = `waited = the larger share of a run the server or autocannon spent waiting for a CPU (run queue, /proc/self/schedstat); ${starved} of ${kept.length} runs waited over ${MAX_WAIT * 100} %, starved by other processes`;
  return ATTEMPTS === 1
    ? `${waited} (not repeated)`
    : `${waited} after up to ${ATTEMPTS} attempts, the least starved kept (${repeated} repeated)`;
}
const loads = (values) => values.map((n) => n.toFixed(2)).join(', ');
console.log(
  `## HTTP\n\nautocannon ${CONNECTIONS} connections, ${SECONDS} s per run after ${WARMUP_SECONDS} s warm-up, ${ROUNDS} rounds, fresh server per run, order reversed every round, ${PIN.text}; ${EXPRESS_TEXT}; ${starvedText()}; every limiter first admitted exactly ${CHECK_LIMIT} of ${CHECK_LIMIT + 3} requests from one client. CPU and heap figures are the server process's: CPU µs/req = process.cpuUsage ÷ requests; heap B/req = JavaScript heap bytes allocated (used-heap growth + bytes each GC freed, V8 GCProfiler) ÷ requests; Redis CPU µs/req = the bench's redis-server's CPU (/proc/<pid>/stat, 10 ms ticks) ÷ requests, not in the server's figure. added = median − the no-limiter median of the same framework and key mode; µs/req − peer: Sluice's CPU µs/req minus the peer's of the same round, median (lowest to highest); below 0, Sluice costs less. Load average ${loads(loadAtStart)} at start, ${loads(loadavg())} at the end.\n\n${sections.join('\n\n')}\n\n${formatEnvironment(env)}\n`,
);
console.log(
  `Saved ${saveResults('http', { environment: env, pinned, expressServer: EXPRESS_SERVER, maxWait: MAX_WAIT, attempts: ATTEMPTS, seconds: SECONDS, rounds: ROUNDS, connections: CONNECTIONS, results })}`,
);

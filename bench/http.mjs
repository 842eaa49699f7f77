/*
 * HTTP: what a limiter adds to a request on Fastify 5 and Express 5, memory store, one hot key
 * (the limit is high enough that every timed request is admitted). Per framework: no limiter,
 * Sluice and the framework's usual peer (@fastify/rate-limit, express-rate-limit), each in a
 * fresh server process (bench/lib/http-server.mjs), loaded by autocannon from this process,
 * forward order on even rounds and reverse on odd ones. Reports req/s (median, range), p50/p99
 * latency and the server's CPU µs per request (process.cpuUsage delta ÷ requests it saw), which
 * reads steadier than req/s on a shared machine; a limiter's added cost is its CPU µs/req minus
 * the no-limiter one of the same framework. First, each limiter must admit exactly a small limit.
 * HTTP_BENCH_SECONDS (default 4) and HTTP_BENCH_ROUNDS (default 3) shorten or lengthen a run.
 */
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { environment, formatEnvironment } from './lib/environment.mjs';
import { owned } from './lib/owned.mjs';
import { saveResults } from './lib/results.mjs';
import { formatInteger, formatTable } from './lib/table.mjs';
import { check, median } from './lib/variants.mjs';

const SERVER = fileURLToPath(new URL('./lib/http-server.mjs', import.meta.url));
const FRAMEWORKS = { fastify: '@fastify/rate-limit', express: 'express-rate-limit' };
const VARIANTS = ['none', 'sluice', 'peer'];
const SECONDS = Number(process.env.HTTP_BENCH_SECONDS ?? 4);
const ROUNDS = Number(process.env.HTTP_BENCH_ROUNDS ?? 3);
const CONNECTIONS = 64;
const HOT_LIMIT = 1_000_000_000;
const CHECK_LIMIT = 5;

async function startServer(framework, variant, limit) {
  const env = { ...process.env, HTTP_FRAMEWORK: framework, HTTP_LIMITER: variant, HTTP_LIMIT: String(limit) };
  const child = owned(fork(SERVER, [], { env, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }));
  const [{ port }] = await once(child, 'message');
  const mark = async () => {
    child.send('mark');
    const [reading] = await once(child, 'message');
    return reading;
  };
  const stop = async () => {
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    await exited;
  };
  return { url: `http://127.0.0.1:${port}/`, mark, stop };
}

/** Correctness before timing: of limit + 3 requests from one client, exactly `limit` pass. */
async function admitsExactlyTheLimit(framework, variant) {
  const server = await startServer(framework, variant, CHECK_LIMIT);
  try {
    let admitted = 0;
    for (let i = 0; i < CHECK_LIMIT + 3; i++) {
      const response = await fetch(server.url);
      await response.arrayBuffer();
      if (response.status === 200) admitted++;
      else check(response.status === 429, `${framework}/${variant} answered ${response.status}`);
    }
    check(admitted === CHECK_LIMIT, `${framework}/${variant} admitted ${admitted} of limit ${CHECK_LIMIT}`);
  } finally {
    await server.stop();
  }
}

async function measure(framework, variant) {
  const server = await startServer(framework, variant, HOT_LIMIT);
  try {
    await autocannon({ url: server.url, connections: CONNECTIONS, duration: 1 }); // warm-up, JIT
    const before = await server.mark();
    const run = await autocannon({ url: server.url, connections: CONNECTIONS, duration: SECONDS });
    const after = await server.mark();
    check(run.non2xx === 0 && run.errors === 0, `${framework}/${variant}: every timed request is admitted`);
    const requests = after.requests - before.requests;
    const cpuUs = after.cpu.user + after.cpu.system - before.cpu.user - before.cpu.system;
    return {
      reqPerSec: run.requests.average,
      p50Ms: run.latency.p50,
      p99Ms: run.latency.p99,
      cpuUsPerReq: cpuUs / requests,
    };
  } finally {
    await server.stop();
  }
}

// Read from node_modules: express-rate-limit's exports leave out its package.json.
const packageVersion = (name) =>
  JSON.parse(readFileSync(new URL(`../node_modules/${name}/package.json`, import.meta.url), 'utf8')).version;

const range = (values, digits = 0) => `${Math.min(...values).toFixed(digits)}–${Math.max(...values).toFixed(digits)}`;

const results = {};
const sections = [];
for (const [framework, peer] of Object.entries(FRAMEWORKS)) {
  for (const variant of VARIANTS.slice(1)) await admitsExactlyTheLimit(framework, variant);
  /** @type {Record<string, any[]>} */
  const runs = Object.fromEntries(VARIANTS.map((variant) => [variant, []]));
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? VARIANTS : [...VARIANTS].reverse();
    for (const variant of order) runs[variant].push(await measure(framework, variant));
  }
  results[framework] = runs;
  const baseCpu = median(runs.none.map((run) => run.cpuUsPerReq));
  const rows = VARIANTS.map((variant) => {
    const list = runs[variant];
    const cpu = list.map((run) => run.cpuUsPerReq);
    const rps = list.map((run) => run.reqPerSec);
    return [
      variant === 'none' ? 'no limiter' : variant === 'sluice' ? 'Sluice (memory)' : peer,
      formatInteger(median(rps)),
      range(rps),
      median(list.map((run) => run.p50Ms)).toFixed(0),
      median(list.map((run) => run.p99Ms)).toFixed(0),
      median(cpu).toFixed(1),
      range(cpu, 1),
      variant === 'none' ? '' : `+${(median(cpu) - baseCpu).toFixed(1)}`,
    ];
  });
  sections.push(
    `### ${framework === 'fastify' ? 'Fastify' : 'Express'} ${packageVersion(framework)}, one hot key, memory store\n\n${formatTable(
      [
        { header: 'limiter' },
        { header: 'req/s median', align: 'right' },
        { header: 'req/s range', align: 'right' },
        { header: 'p50 ms', align: 'right' },
        { header: 'p99 ms', align: 'right' },
        { header: 'server CPU µs/req', align: 'right' },
        { header: 'CPU range', align: 'right' },
        { header: 'added µs/req', align: 'right' },
      ],
      rows,
    )}`,
  );
}

const env = environment({
  fastify: packageVersion('fastify'),
  '@fastify/rate-limit': packageVersion('@fastify/rate-limit'),
  express: packageVersion('express'),
  'express-rate-limit': packageVersion('express-rate-limit'),
  autocannon: packageVersion('autocannon'),
});
console.log(
  `## HTTP\n\nautocannon ${CONNECTIONS} connections, ${SECONDS} s per run after 1 s warm-up, ${ROUNDS} rounds, fresh server per run, alternating order; every limiter first admitted exactly ${CHECK_LIMIT} of ${CHECK_LIMIT + 3} requests.\n\n${sections.join('\n\n')}\n\n${formatEnvironment(env)}\n`,
);
console.log(
  `Saved ${saveResults('http', { environment: env, seconds: SECONDS, rounds: ROUNDS, connections: CONNECTIONS, results })}`,
);

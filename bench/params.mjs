/*
 * Per-call params: CPU ns per decision of the memory store's limitSync() on one hot key, without
 * params and with them, in the same process, variants interleaved round by round (median of
 * rounds). With params a call looks its numbers up in the algorithm's cache (their names checked,
 * a string of their values built); "fresh object" builds the params object per call, as a plan
 * lookup returning a new object would. Redis: one script call per decision with or without
 * params (the parameters travel in the ARGV the script already has), counted in
 * test/params/per-call.test.ts.
 */
import { createMemoryLimiter, gcra } from 'sluice';
import { environment, formatEnvironment } from './lib/environment.mjs';
import { saveResults } from './lib/results.mjs';
import { formatTable } from './lib/table.mjs';

const CALLS = 1_000_000;
const ROUNDS = 7;
// Every timed decision is an admission: a limit no hot key reaches in a round.
const BASE = { limit: 1_000_000_000, periodMs: 3_600_000 };
const PLAN = { limit: 2_000_000_000, periodMs: 3_600_000 };

const limiter = createMemoryLimiter({ algorithm: gcra(BASE), pruneIntervalMs: 0 });
const cost = { cost: 1 };
const withParams = { cost: 1, params: PLAN };
const variants = {
  'limitSync(key)': () => limiter.limitSync('hot-a'),
  'limitSync(key, { cost })': () => limiter.limitSync('hot-b', cost),
  'limitSync(key, { cost, params })': () => limiter.limitSync('hot-c', withParams),
  'limitSync(key, { cost, params }), fresh object': () =>
    limiter.limitSync('hot-d', { cost: 1, params: { limit: PLAN.limit, periodMs: PLAN.periodMs } }),
};

for (const run of Object.values(variants)) {
  if (!run().allowed) throw new Error('a timed decision must be an admission');
}
/** @type {Record<string, number[]>} */
const samples = Object.fromEntries(Object.keys(variants).map((name) => [name, []]));
for (let round = 0; round < ROUNDS; round++) {
  const order = Object.entries(variants);
  if (round % 2 === 1) order.reverse();
  for (const [name, run] of order) {
    let allowed = 0;
    const started = process.cpuUsage();
    for (let i = 0; i < CALLS; i++) if (run().allowed) allowed++;
    const used = process.cpuUsage(started);
    if (allowed !== CALLS) throw new Error(`${name}: ${CALLS - allowed} denied`);
    samples[name].push(((used.user + used.system) * 1000) / CALLS);
  }
}
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const base = median(samples['limitSync(key, { cost })']);
const rows = Object.entries(samples).map(([name, values]) => {
  const ns = median(values);
  return [name, ns.toFixed(1), `${ns - base >= 0 ? '+' : ''}${(ns - base).toFixed(1)}`];
});
const env = environment();
console.log(`## Per-call params (memory, GCRA, one hot key)\n\n${formatEnvironment(env)}\n`);
console.log(
  formatTable([{ header: 'call' }, { header: 'CPU ns / decision (median)' }, { header: 'vs { cost }' }], rows),
);
console.log(`\nRedis: 1 script call per decision with or without params (counted in test/params/per-call.test.ts).\n`);
console.log(`Results: ${saveResults('params', { environment: env, calls: CALLS, rounds: ROUNDS, samples })}`);

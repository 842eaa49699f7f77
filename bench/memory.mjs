/*
 * Memory store: CPU ns per decision on 1 hot key and on 100k keys (in creation order, and in
 * random order, where no two neighbouring decisions share cache lines), beside
 * rate-limiter-flexible's RateLimiterMemory and beside two floors (Map get + set + one clock read;
 * awaiting an async function that returns an object already built); bytes per key over 100k keys. Like is compared with like: Sluice's synchronous limitSync() with
 * the synchronous body of RateLimiterMemory's consume() (it has no public synchronous call), and
 * Sluice's awaited limit() with an awaited consume(). Every variant runs in a fresh process
 * (--expose-gc), rounds alternate the order, and each implementation passes a correctness check
 * before it is timed.
 */
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { do_not_optimize } from 'mitata';
import { RateLimiterMemory } from 'rate-limiter-flexible';
import { createMemoryLimiter, gcra } from 'sluice';
import { environment, formatEnvironment } from './lib/environment.mjs';
import { saveResults } from './lib/results.mjs';
import { formatInteger, formatTable } from './lib/table.mjs';
import { check, median, runVariants, sendResult, variantName } from './lib/variants.mjs';

const KEYS = 100_000;
const PERIOD_MS = 3_600_000;
// Per hour, high enough that every timed decision is an admission (all implementations take the
// same path), low enough on 100k keys that each key's state stays ahead of the clock (checkable).
const LIMIT = { hot: 1_000_000_000, keys: 10_000, sized: 100 };
const ROUNDS = 5;
const MIN_CPU_NS = 300e6;
const WARM_UP_CPU_NS = 100e6;
const BATCH = 10_000;

const IMPLEMENTATIONS = {
  clock: {
    label: 'reference: performance.now() alone',
    async create() {
      return {
        decide: () => performance.now(),
        async verify() {},
      };
    },
  },
  floor: {
    label: 'floor: Map get + set + performance.now()',
    async create() {
      const map = new Map();
      return {
        decide(key) {
          const now = performance.now();
          const tat = map.get(key);
          map.set(key, (tat === undefined ? now : tat) + 1);
          return tat;
        },
        async verify({ keyCount }) {
          check(map.size === keyCount, `the floor holds ${keyCount} keys`);
        },
      };
    },
  },
  'await-floor': {
    label: 'await floor: await an async function returning a built object',
    async create() {
      const built = { allowed: true };
      return {
        // What every awaited limiter pays on top of its decision: the Promise and the turn.
        decide: async () => built,
        async verify() {},
      };
    },
  },
  'sluice-sync': {
    label: 'Sluice memory GCRA, limitSync()',
    async create(limit) {
      checkSluice();
      const limiter = createMemoryLimiter({ algorithm: gcra({ limit, periodMs: PERIOD_MS }), maxKeys: KEYS });
      return { decide: (key) => limiter.limitSync(key), verify: verifySluice(limiter, limit) };
    },
  },
  'sluice-async': {
    label: 'Sluice memory GCRA, limit() (Promise)',
    async create(limit) {
      checkSluice();
      const limiter = createMemoryLimiter({ algorithm: gcra({ limit, periodMs: PERIOD_MS }), maxKeys: KEYS });
      return { decide: (key) => limiter.limit(key), verify: verifySluice(limiter, limit) };
    },
  },
  'rlf-sync': {
    label: 'rate-limiter-flexible RateLimiterMemory, the body of consume() without its Promise',
    async create(limit) {
      await checkRlf();
      const limiter = rlfLimiter(limit);
      // Not in its types: the store consume() writes to, and its duration lookup.
      const internals = /** @type {RlfInternals} */ (/** @type {unknown} */ (limiter));
      // consume()'s executor, line for line, minus the Promise and the branches an admission skips
      // (block, execEvenly): its own synchronous path.
      const consumeSync = (key, points = 1, options = {}) => {
        const res = internals._memoryStorage.incrby(limiter.getKey(key), points, internals._getKeySecDuration(options));
        res.remainingPoints = Math.max(limiter.points - res.consumedPoints, 0);
        return res.consumedPoints > limiter.points ? undefined : res;
      };
      return { decide: (key) => consumeSync(key), verify: verifyRlf(limiter) };
    },
  },
  'rlf-async': {
    label: 'rate-limiter-flexible RateLimiterMemory, consume() (Promise)',
    async create(limit) {
      await checkRlf();
      const limiter = rlfLimiter(limit);
      return { decide: (key) => limiter.consume(key), verify: verifyRlf(limiter) };
    },
  },
};

/**
 * @typedef {{
 *   _memoryStorage: { incrby(key: string, points: number, durationSec: number): { consumedPoints: number, remainingPoints: number } },
 *   _getKeySecDuration(options: object): number,
 * }} RlfInternals
 */

/** keyPrefix '' spares it a string concatenation per call: the fastest way to use it. */
function rlfLimiter(limit) {
  return new RateLimiterMemory({ points: limit, duration: PERIOD_MS / 1000, keyPrefix: '' });
}

function verifyRlf(limiter) {
  return async ({ key, hits }) => {
    const res = await limiter.get(key);
    check(res?.consumedPoints === hits, `RateLimiterMemory counted ${res?.consumedPoints} of ${hits} hits`);
  };
}

/** The comparisons the targets are about: each Sluice call beside the same kind of call of RLF. */
const PAIRS = [
  { id: 'sync', ours: 'sluice-sync', theirs: 'rlf-sync', label: 'synchronous: limitSync() vs consume() body' },
  { id: 'awaited', ours: 'sluice-async', theirs: 'rlf-async', label: 'awaited: await limit() vs await consume()' },
];

const KEY_OF = (i) => `user:${i}`;

function checkSluice() {
  let now = 0;
  const limiter = createMemoryLimiter({ algorithm: gcra({ limit: 5, periodMs: 10_000 }), clock: () => now });
  for (let i = 0; i < 5; i++) check(limiter.limitSync('k').allowed, `admission ${i + 1} of 5`);
  const denied = limiter.limitSync('k');
  check(!denied.allowed && denied.retryAfterMs === 2000, 'the 6th request is denied, retry after 2000 ms');
  now = 2000;
  check(limiter.limitSync('k').allowed, 'one more after one emission interval');
}

/** The first key spent one unit per hit, less what regenerated since its first hit. */
function verifySluice(limiter, limit) {
  const intervalMs = Math.ceil((PERIOD_MS * 1000) / limit) / 1000;
  return async ({ key, hits, keyCount, elapsedMs }) => {
    check(limiter.size === keyCount, `the store holds all ${keyCount} keys`);
    const remaining = limiter.peekSync(key).remaining;
    // The limiter reads whole ms (its clock floored), so it can see up to 1 ms more than elapsedMs.
    const regenerated = Math.floor((elapsedMs + 1) / intervalMs) + 1;
    check(
      remaining >= limit - hits && remaining <= Math.min(limit, limit - hits + regenerated),
      `the first key spent ${hits} units, ${regenerated} came back: remaining ${remaining}`,
    );
  };
}

async function checkRlf() {
  const limiter = new RateLimiterMemory({ points: 5, duration: 10 });
  for (let i = 0; i < 5; i++) await limiter.consume('k');
  const denied = await limiter.consume('k').then(
    () => undefined,
    (res) => res,
  );
  check(denied?.remainingPoints === 0, 'RateLimiterMemory denies the 6th request');
}

/**
 * CPU ns per decision of one implementation on `keyCount` keys, all present before timing (decided
 * once in creation order), then cycled in creation order or in one fixed random order (the same
 * for every implementation), where neighbouring decisions share no cache lines. CPU time
 * (process.cpuUsage), not wall time: on a shared machine, time spent waiting for a core is not
 * the implementation's.
 */
async function timeDecisions(implementation, keyCount, order) {
  const subject = await IMPLEMENTATIONS[implementation].create(keyCount === 1 ? LIMIT.hot : LIMIT.keys);
  const created = Array.from({ length: keyCount }, (_, i) => KEY_OF(i));
  const started = performance.now();
  for (const key of created) await subject.decide(key);
  const keys = order === 'random' ? shuffled(created) : created;
  const isAsync = subject.decide(keys[0]) instanceof Promise;
  let firstKeyHits = 2; // filling, then the probe above
  let i = keyCount > 1 ? 1 : 0;
  const step = () => {
    const key = keys[i];
    if (i === 0) firstKeyHits++;
    i = i + 1 === keyCount ? 0 : i + 1;
    return subject.decide(key);
  };
  const run = isAsync ? runAwaited : runSync;
  await run(step, WARM_UP_CPU_NS);
  const result = await run(step, MIN_CPU_NS);
  await subject.verify({ key: keys[0], hits: firstKeyHits, keyCount, elapsedMs: performance.now() - started });
  return result;
}

/** Calls `step` in batches until `cpuNs` of CPU time has passed: CPU and wall ns per call. */
function runSync(step, cpuNs) {
  const cpuStart = process.cpuUsage();
  const wallStart = performance.now();
  let calls = 0;
  let spentNs = 0;
  while (spentNs < cpuNs) {
    for (let i = 0; i < BATCH; i++) do_not_optimize(step());
    calls += BATCH;
    spentNs = cpuNsSince(cpuStart);
  }
  return { nsPerOp: spentNs / calls, wallNsPerOp: ((performance.now() - wallStart) * 1e6) / calls, calls };
}

/** As {@link runSync}, awaiting each call. */
async function runAwaited(step, cpuNs) {
  const cpuStart = process.cpuUsage();
  const wallStart = performance.now();
  let calls = 0;
  let spentNs = 0;
  while (spentNs < cpuNs) {
    for (let i = 0; i < BATCH; i++) do_not_optimize(await step());
    calls += BATCH;
    spentNs = cpuNsSince(cpuStart);
  }
  return { nsPerOp: spentNs / calls, wallNsPerOp: ((performance.now() - wallStart) * 1e6) / calls, calls };
}

/** @param {NodeJS.CpuUsage} start */
function cpuNsSince(start) {
  const { user, system } = process.cpuUsage(start);
  return (user + system) * 1000;
}

/** A copy of `items` in a random order that is the same in every process (mulberry32, seed 1). */
function shuffled(items) {
  const copy = [...items];
  let seed = 1;
  const random = () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [copy[i], copy[j]] = [copy[j], copy[i]];
  }
  return copy;
}

/** Heap + array-buffer bytes held per key after deciding `KEYS` keys once (gc before and after). */
async function bytesPerKey(implementation, countKeyStrings) {
  const subject = await IMPLEMENTATIONS[implementation].create(LIMIT.sized);
  let keys = countKeyStrings ? undefined : Array.from({ length: KEYS }, (_, i) => KEY_OF(i));
  const usage = () => {
    /** @type {() => void} */ (globalThis.gc)();
    /** @type {() => void} */ (globalThis.gc)();
    const { heapUsed, arrayBuffers } = process.memoryUsage();
    return { heapUsed, arrayBuffers };
  };
  const before = usage();
  keys ??= Array.from({ length: KEYS }, (_, i) => KEY_OF(i));
  for (const key of keys) await subject.decide(key);
  if (countKeyStrings) keys = undefined; // only the store holds the key strings now
  const after = usage();
  // Keeps both alive through the second reading: V8 may free a local after its last use.
  do_not_optimize([subject, keys]);
  const heap = (after.heapUsed - before.heapUsed) / KEYS;
  const offHeap = (after.arrayBuffers - before.arrayBuffers) / KEYS;
  return { bytesPerKey: heap + offHeap, heap, offHeap };
}

const SHAPES = [
  { id: '1:seq', header: '1 hot key, ns' },
  { id: `${KEYS}:seq`, header: `${formatInteger(KEYS)} keys in order, ns` },
  { id: `${KEYS}:random`, header: `${formatInteger(KEYS)} keys in random order, ns` },
];
// Shape by shape, so the implementations compared on one shape run seconds apart, in the same
// state of a machine whose speed drifts over minutes.
const TIMED = SHAPES.flatMap((shape) => Object.keys(IMPLEMENTATIONS).map((name) => `time:${name}:${shape.id}`));
const SIZED = ['floor', 'sluice-sync', 'rlf-async'].flatMap((name) => [`bytes:${name}:excl`, `bytes:${name}:incl`]);

const variant = variantName();
if (variant !== undefined) {
  const [kind, implementation, arg, order] = variant.split(':');
  sendResult(
    kind === 'time'
      ? await timeDecisions(implementation, Number(arg), order)
      : await bytesPerKey(implementation, arg === 'incl'),
  );
} else {
  await main();
}

async function main() {
  const loadAtStart = formatLoad();
  const file = fileURLToPath(import.meta.url);
  const timed = await runVariants(file, TIMED, { rounds: ROUNDS, execArgv: ['--expose-gc'] });
  const sized = await runVariants(file, SIZED, { rounds: 1, execArgv: ['--expose-gc'] });
  const rounds = (name, shape) => timed.get(`time:${name}:${shape}`).map((r) => r.nsPerOp);
  const bytes = (name, which) => sized.get(`bytes:${name}:${which}`)[0];
  const names = Object.keys(IMPLEMENTATIONS);
  const fixed = (n) => n.toFixed(1);
  const spread = (values, digits) =>
    `${median(values).toFixed(digits)} (${Math.min(...values).toFixed(digits)}–${Math.max(...values).toFixed(digits)})`;

  const env = environment();
  console.log('## Memory store\n');
  console.log(`${formatEnvironment(env)}\n`);
  console.log(`Load average (1, 5, 15 min): ${loadAtStart} at the start, ${formatLoad()} at the end, on ${env.cpu}.\n`);
  console.log(
    `CPU ns per decision (process.cpuUsage over ≥ ${MIN_CPU_NS / 1e6} ms after ${WARM_UP_CPU_NS / 1e6} ms of warm-up): ` +
      `median (range) of ${ROUNDS} fresh processes in alternating order; every decision an admission (limit ` +
      `${formatInteger(LIMIT.hot)} per hour on the hot key, ${formatInteger(LIMIT.keys)} on ${formatInteger(KEYS)} keys). ` +
      `The ${formatInteger(KEYS)} keys are all decided once before timing, then cycled in that order or in one fixed ` +
      'random order. RateLimiterMemory has no public synchronous call: its synchronous row is the body of consume() ' +
      'without the Promise (its internal `_memoryStorage.incrby`, as consume() calls it).\n',
  );
  console.log(
    formatTable(
      [{ header: 'implementation' }, ...SHAPES.map((shape) => ({ header: shape.header, align: 'right' }))],
      names.map((name) => [IMPLEMENTATIONS[name].label, ...SHAPES.map((shape) => spread(rounds(name, shape.id), 1))]),
    ),
  );

  // RLF ns ÷ Sluice ns, round by round (the pair ran seconds apart): above 1 is Sluice faster.
  const ratios = (pair, shape) => {
    const ours = rounds(pair.ours, shape);
    return rounds(pair.theirs, shape).map((theirs, i) => theirs / ours[i]);
  };
  console.log(
    '\nLike for like: RateLimiterMemory ns ÷ Sluice ns, same shape, same kind of call, round by round; ' +
      'median (range). Above 1.00× Sluice is faster.\n',
  );
  console.log(
    formatTable(
      [
        { header: 'comparison' },
        ...SHAPES.map((shape) => ({ header: shape.header.replace(', ns', ''), align: 'right' })),
      ],
      PAIRS.map((pair) => [pair.label, ...SHAPES.map((shape) => `${spread(ratios(pair, shape.id), 2)}×`)]),
    ),
  );
  const [sync, awaited] = PAIRS;
  const speedup = (pair, shape) => median(ratios(pair, shape));
  const targets = [
    { name: 'hot key, limitSync ≤ 1.0× the synchronous consume()', target: 1, measured: speedup(sync, '1:seq') },
    {
      name: `${formatInteger(KEYS)} random keys, limitSync ≥ 2× the synchronous consume()`,
      target: 2,
      measured: speedup(sync, `${KEYS}:random`),
    },
    {
      name: `${formatInteger(KEYS)} random keys, await limit() ≥ 5× await consume()`,
      target: 5,
      measured: speedup(awaited, `${KEYS}:random`),
    },
  ];
  console.log('\nTargets (speed-ups, RLF ÷ Sluice):');
  for (const { name, target, measured } of targets) {
    console.log(`- ${name}: ${measured.toFixed(2)}× (${measured >= target ? 'met' : 'missed'})`);
  }
  // An awaited decision costs at least the await floor plus the synchronous decision it wraps.
  const random = `${KEYS}:random`;
  const awaitedBudget = median(rounds('rlf-async', random)) / 5;
  const awaitedLeast = median(rounds('await-floor', random)) + median(rounds('sluice-sync', random));
  console.log(
    `\nIs 5× reachable? It needs ≤ ${fixed(awaitedBudget)} ns per awaited decision on ${formatInteger(KEYS)} random ` +
      `keys; the await floor plus limitSync alone is ${fixed(awaitedLeast)} ns (medians): ` +
      `${awaitedLeast <= awaitedBudget ? 'reachable' : 'not reachable without a faster limitSync or a cheaper await'}.`,
  );
  // What no store built on a Map can pass: the floor looks a key up once and reads the clock.
  const ceiling = (shape) => {
    const floor = rounds('floor', shape);
    return rounds('rlf-sync', shape).map((theirs, i) => theirs / floor[i]);
  };
  console.log(
    '\nCeiling of a store on a `Map`: the synchronous consume() body ÷ the floor (Map get + set + ' +
      `performance.now()), round by round: 1 hot key ${spread(ceiling('1:seq'), 2)}×, ${formatInteger(KEYS)} ` +
      `random keys ${spread(ceiling(`${KEYS}:random`), 2)}×.`,
  );

  console.log(
    `\nBytes per key: (heap used + array buffers) after − before deciding ${formatInteger(KEYS)} keys once, ` +
      'gc() twice on each side, fresh process. "excl." keeps the key strings alive on both sides; "incl." counts them.\n',
  );
  const storeLabels = {
    floor: 'floor: Map<string, number>',
    'sluice-sync': 'Sluice memory store (GCRA)',
    'rlf-async': 'RateLimiterMemory',
  };
  console.log(
    formatTable(
      [
        { header: 'store' },
        { header: 'B/key excl. key string', align: 'right' },
        { header: 'of which heap', align: 'right' },
        { header: 'of which array buffers', align: 'right' },
        { header: 'B/key incl. key string', align: 'right' },
      ],
      Object.entries(storeLabels).map(([name, label]) => [
        label,
        fixed(bytes(name, 'excl').bytesPerKey),
        fixed(bytes(name, 'excl').heap),
        fixed(bytes(name, 'excl').offHeap),
        fixed(bytes(name, 'incl').bytesPerKey),
      ]),
    ),
  );
  const sluiceBytes = bytes('sluice-sync', 'excl').bytesPerKey;
  console.log(
    `\nTarget: memory store ≤ 48 B/key excluding the key string: ${fixed(sluiceBytes)} B (${sluiceBytes <= 48 ? 'met' : 'missed'}).\n`,
  );

  const path = saveResults('memory', {
    environment: env,
    method: {
      keys: KEYS,
      limit: LIMIT,
      periodMs: PERIOD_MS,
      rounds: ROUNDS,
      minCpuNs: MIN_CPU_NS,
      warmUpCpuNs: WARM_UP_CPU_NS,
      measure: 'process.cpuUsage (user + system) ns per decision; wallNsPerOp beside it',
      rlfSync: "RateLimiterMemory consume()'s body without its Promise (_memoryStorage.incrby)",
    },
    nsPerDecision: Object.fromEntries(
      names.map((name) => [
        name,
        Object.fromEntries(
          SHAPES.map((shape) => [
            shape.id,
            { median: median(rounds(name, shape.id)), rounds: timed.get(`time:${name}:${shape.id}`) },
          ]),
        ),
      ]),
    ),
    likeForLike: Object.fromEntries(
      PAIRS.map((pair) => [
        pair.id,
        Object.fromEntries(
          SHAPES.map((shape) => {
            const values = ratios(pair, shape.id);
            return [shape.id, { median: median(values), min: Math.min(...values), max: Math.max(...values) }];
          }),
        ),
      ]),
    ),
    bytesPerKey: Object.fromEntries(
      Object.keys(storeLabels).map((name) => [
        name,
        { excludingKeyStrings: bytes(name, 'excl'), includingKeyStrings: bytes(name, 'incl') },
      ]),
    ),
    ceilingOverFloor: Object.fromEntries(SHAPES.map((shape) => [shape.id, median(ceiling(shape.id))])),
    awaitedFiveTimes: { budgetNs: awaitedBudget, awaitFloorPlusLimitSyncNs: awaitedLeast },
    targets: {
      speedups: targets,
      bytesPerKeyExcludingKeyString: { target: 48, measured: sluiceBytes },
    },
  });
  console.log(`Saved ${path}\n`);
}

function formatLoad() {
  return loadavg()
    .map((n) => n.toFixed(2))
    .join(', ');
}

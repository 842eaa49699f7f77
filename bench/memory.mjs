/*
 * Memory store: ns per decision on 1 hot key and on 100k keys (in creation order, and in random
 * order, where no two neighbouring decisions share cache lines), beside rate-limiter-flexible's
 * RateLimiterMemory and beside a floor (Map get + set + one clock read); bytes per key over
 * 100k keys. Every variant runs in a fresh process (--expose-gc), rounds alternate the order,
 * and each implementation passes a correctness check before it is timed.
 */
import { fileURLToPath } from 'node:url';
import { do_not_optimize, measure } from 'mitata';
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
  rlf: {
    label: 'rate-limiter-flexible RateLimiterMemory, consume()',
    async create(limit) {
      await checkRlf();
      // keyPrefix '' spares it a string concatenation per call: the fastest way to use it.
      const limiter = new RateLimiterMemory({ points: limit, duration: PERIOD_MS / 1000, keyPrefix: '' });
      return {
        decide: (key) => limiter.consume(key),
        async verify({ key, hits }) {
          const res = await limiter.get(key);
          check(res?.consumedPoints === hits, `RateLimiterMemory counted ${res?.consumedPoints} of ${hits} hits`);
        },
      };
    },
  },
};

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
    const regenerated = Math.floor(elapsedMs / intervalMs) + 1;
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
 * ns per decision of one implementation on `keyCount` keys, all present before timing (decided
 * once in creation order), then cycled in creation order or in one fixed random order (the same
 * for every implementation), where neighbouring decisions share no cache lines.
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
  const stats = await measure(isAsync ? async () => do_not_optimize(await step()) : () => do_not_optimize(step()), {
    min_cpu_time: MIN_CPU_NS,
  });
  await subject.verify({ key: keys[0], hits: firstKeyHits, keyCount, elapsedMs: performance.now() - started });
  return { nsPerOp: stats.avg, p50: stats.p50, p99: stats.p99 };
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
const SIZED = ['floor', 'sluice-sync', 'rlf'].flatMap((name) => [`bytes:${name}:excl`, `bytes:${name}:incl`]);

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
  const file = fileURLToPath(import.meta.url);
  const timed = await runVariants(file, TIMED, { rounds: ROUNDS, execArgv: ['--expose-gc'] });
  const sized = await runVariants(file, SIZED, { rounds: 1, execArgv: ['--expose-gc'] });
  const ns = (name, shape) => median(timed.get(`time:${name}:${shape}`).map((r) => r.nsPerOp));
  const bytes = (name, which) => sized.get(`bytes:${name}:${which}`)[0];
  const names = Object.keys(IMPLEMENTATIONS);

  const env = environment();
  console.log('## Memory store\n');
  console.log(`${formatEnvironment(env)}\n`);
  console.log(
    `ns per decision: mitata average over ≥ ${MIN_CPU_NS / 1e6} ms, median of ${ROUNDS} fresh processes in alternating order; ` +
      `every decision an admission (limit ${formatInteger(LIMIT.hot)} per hour on the hot key, ${formatInteger(LIMIT.keys)} on ` +
      `${formatInteger(KEYS)} keys). The ${formatInteger(KEYS)} keys are all decided once before timing, then cycled in that ` +
      'order or in one fixed random order. Last column: RateLimiterMemory ns ÷ this ns, same shape, the median of ' +
      'the round-by-round ratios.\n',
  );
  // RateLimiterMemory ÷ this, round by round (the pair ran seconds apart), then the median.
  const ratio = (name, shape) => {
    const ours = timed.get(`time:${name}:${shape}`);
    return median(timed.get(`time:rlf:${shape}`).map((theirs, i) => theirs.nsPerOp / ours[i].nsPerOp));
  };
  console.log(
    formatTable(
      [
        { header: 'implementation' },
        ...SHAPES.map((shape) => ({ header: shape.header, align: 'right' })),
        { header: 'vs RateLimiterMemory: in order / random', align: 'right' },
      ],
      names.map((name) => [
        IMPLEMENTATIONS[name].label,
        ...SHAPES.map((shape) => ns(name, shape.id).toFixed(1)),
        `${ratio(name, `${KEYS}:seq`).toFixed(2)}× / ${ratio(name, `${KEYS}:random`).toFixed(2)}×`,
      ]),
    ),
  );
  const speedups = Object.fromEntries(
    ['sluice-sync', 'sluice-async'].map((name) => [
      name,
      { inOrder: ratio(name, `${KEYS}:seq`), randomOrder: ratio(name, `${KEYS}:random`) },
    ]),
  );
  const verdict = ({ inOrder, randomOrder }) =>
    `${inOrder.toFixed(2)}× in order, ${randomOrder.toFixed(2)}× in random order (${Math.min(inOrder, randomOrder) >= 5 ? 'met' : 'missed'})`;
  console.log(
    `\nTarget: memory GCRA ≥ 5× RateLimiterMemory at ${formatInteger(KEYS)} keys. ` +
      `limitSync: ${verdict(speedups['sluice-sync'])}; limit(): ${verdict(speedups['sluice-async'])}.\n`,
  );

  console.log(
    `Bytes per key: (heap used + array buffers) after − before deciding ${formatInteger(KEYS)} keys once, ` +
      'gc() twice on each side, fresh process. "excl." keeps the key strings alive on both sides; "incl." counts them.\n',
  );
  const storeLabels = {
    floor: 'floor: Map<string, number>',
    'sluice-sync': 'Sluice memory store (GCRA)',
    rlf: 'RateLimiterMemory',
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
        bytes(name, 'excl').bytesPerKey.toFixed(1),
        bytes(name, 'excl').heap.toFixed(1),
        bytes(name, 'excl').offHeap.toFixed(1),
        bytes(name, 'incl').bytesPerKey.toFixed(1),
      ]),
    ),
  );
  const sluiceBytes = bytes('sluice-sync', 'excl').bytesPerKey;
  console.log(
    `\nTarget: memory store ≤ 48 B/key excluding the key string: ${sluiceBytes.toFixed(1)} B (${sluiceBytes <= 48 ? 'met' : 'missed'}).\n`,
  );

  const path = saveResults('memory', {
    environment: env,
    method: { keys: KEYS, limit: LIMIT, periodMs: PERIOD_MS, rounds: ROUNDS, minCpuNs: MIN_CPU_NS },
    nsPerDecision: Object.fromEntries(
      names.map((name) => [
        name,
        Object.fromEntries(
          SHAPES.map((shape) => [
            shape.id,
            { median: ns(name, shape.id), rounds: timed.get(`time:${name}:${shape.id}`) },
          ]),
        ),
      ]),
    ),
    bytesPerKey: Object.fromEntries(
      Object.keys(storeLabels).map((name) => [
        name,
        { excludingKeyStrings: bytes(name, 'excl'), includingKeyStrings: bytes(name, 'incl') },
      ]),
    ),
    targets: {
      speedupVsRateLimiterMemory100k: {
        target: 5,
        limitSync: speedups['sluice-sync'],
        limit: speedups['sluice-async'],
      },
      bytesPerKeyExcludingKeyString: { target: 48, measured: sluiceBytes },
    },
  });
  console.log(`Saved ${path}\n`);
}

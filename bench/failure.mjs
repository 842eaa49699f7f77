/*
 * Failure modes: what a client sees while Redis is paused for 2 s (SIGSTOP) and while it is
 * killed and restarted on the same port (SIGKILL, data lost), for each failure policy; then
 * the accuracy of the local fallback with 3 heartbeating instances and limit 90.
 *
 * Each scenario runs in a fresh process against its own redis-server (started here, on a free
 * loopback port). A fleet of 3 instances (one ioredis connection, limiter and heartbeat each)
 * serves 60 callers, each calling every 20 ms on one of 20 keys (3,000 decisions/s offered,
 * 150/s per key against GCRA 100/s per key, burst 10). The outage window runs from the fault
 * until every instance has had a decision taken by Redis again once the server was back (the
 * clients' outage); its figures are the decisions started in it.
 * "Redis calls" are the script calls the limiters sent between the fault and the server being
 * back (heartbeats not included: one per instance per second). Last, the cost of the wrapper
 * on a healthy store: awaited decisions, bare and wrapped, on memory and on Redis.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { createMemoryLimiter, gcra } from 'sluice';
import { withFailurePolicy } from 'sluice/policy';
import { createHeartbeat, createRedisLimiter, toScriptClient } from 'sluice/redis';
import { environment, formatEnvironment } from './lib/environment.mjs';
import { INSTALL_REDIS, locateRedisServer } from './lib/redis-process.mjs';
import { saveResults } from './lib/results.mjs';
import { formatInteger, formatTable } from './lib/table.mjs';
import { check, median, runVariants, sendResult, variantName } from './lib/variants.mjs';

const FILE = fileURLToPath(import.meta.url);
const POLICIES = ['none', 'open', 'closed', 'fallback'];
const FAULTS = ['pause', 'restart'];
const ACCURACY = ['uniform', 'skewed', 'one-dies', 'one-joins'];
const KEYS = 20;
const CALLERS = 60;
const PACE_MS = 20;
const LIMIT_PER_S = 100;
const PAUSE_MS = 2000;
const RESILIENT = {
  enableOfflineQueue: false,
  maxRetriesPerRequest: 0,
  autoResendUnfulfilledCommands: false,
  connectTimeout: 1000,
  retryStrategy: (attempt) => Math.min(attempt * 50, 500),
};

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// ---------------------------------------------------------------- a redis-server we can abuse

async function freePort() {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());
  server.close();
  return port;
}

async function launch(command, port) {
  const child = spawn(command, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  let output = '';
  await new Promise((resolve, reject) => {
    child.stdout.on('data', (chunk) => {
      output += chunk;
      if (output.includes('Ready to accept connections')) resolve(undefined);
    });
    child.once('exit', (code) => reject(new Error(`redis-server exited with ${code}`)));
  });
  child.stdout.removeAllListeners('data');
  child.stdout.resume();
  return child;
}

async function abusableServer(command) {
  const port = await freePort();
  let child = await launch(command, port);
  process.once('exit', () => child.kill('SIGKILL'));
  const kill = async (signal) => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGCONT');
    const exited = once(child, 'exit');
    child.kill(signal);
    await exited;
  };
  return {
    port,
    pause: () => child.kill('SIGSTOP'),
    resume: () => child.kill('SIGCONT'),
    async restart() {
      await kill('SIGKILL');
      child = await launch(command, port);
    },
    stop: () => kill('SIGTERM'),
  };
}

// ---------------------------------------------------------------- a fleet of 3 instances

function countingClient(client) {
  const inner = toScriptClient(client);
  const counter = { sent: 0 };
  return {
    counter,
    client: {
      evalsha: (sha, keys, args) => {
        counter.sent++;
        return inner.evalsha(sha, keys, args);
      },
      eval: (source, keys, args) => {
        counter.sent++;
        return inner.eval(source, keys, args);
      },
    },
  };
}

async function fleet(port, policy, algorithm, { name = 'bench', size = 3 } = {}) {
  /** @type {{ client: Redis, counter?: { sent: number }, heartbeat?: any, limiter: any }[]} */
  const instances = [];
  for (let i = 0; i < size; i++) {
    // Without a policy, ioredis as most apps configure it: defaults (offline queue, 20 retries).
    const client =
      policy === 'none' ? new Redis({ port, host: '127.0.0.1' }) : new Redis({ port, host: '127.0.0.1', ...RESILIENT });
    client.on('error', () => {});
    await once(client, 'ready');
    const { counter, client: counted } = countingClient(client);
    const remote = createRedisLimiter({ client: counted, algorithm });
    if (policy === 'none') {
      instances.push({ client, counter, limiter: remote });
      continue;
    }
    const heartbeat = createHeartbeat({ client, name, intervalMs: 1000 });
    const limiter = withFailurePolicy(remote, {
      failure: policy,
      fallback: { instances: heartbeat },
      onWarning: false,
    });
    instances.push({ client, counter, heartbeat, limiter });
  }
  for (let round = 0; round < 2; round++) await Promise.all(instances.map((i) => i.heartbeat?.beat()));
  // Correctness before measuring: the instances share one limit (10 per hour here, so no refill).
  const checks = instances.map((i) =>
    createRedisLimiter({ client: i.client, algorithm: gcra({ limit: 10, periodMs: 3_600_000 }), prefix: 'check:' }),
  );
  let admitted = 0;
  for (let n = 0; n < 30; n++) if ((await checks[n % size].limit('check')).allowed) admitted++;
  check(admitted === 10, `the fleet admits 10 of 30 on a limit of 10, got ${admitted}`);
  return {
    instances,
    sent: () => instances.reduce((sum, i) => sum + (i.counter?.sent ?? 0), 0),
    async close() {
      for (const i of instances) {
        await i.heartbeat?.close();
        await i.limiter.close();
        i.client.disconnect();
      }
    },
  };
}

// ---------------------------------------------------------------- scenario: one policy, one fault

async function outage(policy, fault) {
  const server = await abusableServer(locateRedisServer());
  const { instances, sent, close } = await fleet(
    server.port,
    policy,
    gcra({ limit: LIMIT_PER_S, periodMs: 1000, burst: 10 }),
  );
  const calls = [];
  let running = true;
  const loops = Array.from({ length: CALLERS }, async (_, c) => {
    const { limiter } = instances[c % 3];
    const key = `tenant-${c % KEYS}`;
    while (running) {
      const startedAt = performance.now();
      let outcome;
      let reason;
      try {
        const decision = await limiter.limit(key);
        outcome = decision.degraded
          ? `degraded-${decision.allowed ? 'allowed' : 'denied'}`
          : decision.allowed
            ? 'allowed'
            : 'denied';
        reason = decision.degradedReason;
      } catch {
        outcome = 'error';
      }
      calls.push({ instance: c % 3, startedAt, endedAt: performance.now(), outcome, reason });
      await sleep(PACE_MS);
    }
  });
  await sleep(1000);
  const faultAt = performance.now();
  const sentAtFault = sent();
  if (fault === 'pause') {
    server.pause();
    await sleep(PAUSE_MS);
    server.resume();
  } else {
    await server.restart();
  }
  const backAt = performance.now();
  const sentWhileDown = sent() - sentAtFault;
  await sleep(2500);
  running = false;
  await Promise.all(loops);
  await close();
  await server.stop();

  // The fleet's outage ends when every instance has had a decision taken by Redis again after
  // the server is back (its breaker closed, its connection up): the window is [fault, then].
  const healthy = (c) => c.outcome === 'allowed' || c.outcome === 'denied';
  const recoveredAt = Math.max(
    ...[0, 1, 2].map((i) =>
      Math.min(...calls.filter((c) => c.instance === i && c.startedAt >= backAt && healthy(c)).map((c) => c.startedAt)),
    ),
  );
  const inWindow = calls.filter((c) => c.startedAt >= faultAt && c.startedAt < recoveredAt);
  const windowEnd = recoveredAt;
  // Degraded decisions after recovery: deadline misses of a loaded machine, not of the fault.
  const after = calls.filter((c) => c.startedAt >= recoveredAt && !healthy(c));
  const degradedAfter = after.length;
  const reasons = (list) => {
    const counts = {};
    for (const c of list) if (c.reason) counts[c.reason] = (counts[c.reason] ?? 0) + 1;
    return counts;
  };
  const latencies = inWindow.map((c) => c.endedAt - c.startedAt).sort((a, b) => a - b);
  const count = (predicate) => inWindow.filter((c) => predicate(c.outcome)).length;
  const windowMs = windowEnd - faultAt;
  return {
    policy,
    fault,
    serverDownMs: backAt - faultAt,
    windowMs,
    decisions: inWindow.length,
    admitted: count((o) => o.endsWith('allowed')),
    denied: count((o) => o.endsWith('denied')),
    degraded: count((o) => o.startsWith('degraded')),
    errors: count((o) => o === 'error'),
    // What the limit allows in the window, fleet-wide: the rate plus one burst per key.
    ideal: Math.floor(KEYS * (10 + (LIMIT_PER_S * windowMs) / 1000)),
    p50Ms: percentile(latencies, 0.5),
    p99Ms: percentile(latencies, 0.99),
    maxMs: latencies.at(-1) ?? 0,
    redisCallsWhileDown: sentWhileDown,
    degradedAfterRecovery: degradedAfter,
    reasonsInWindow: reasons(inWindow),
    reasonsAfterRecovery: reasons(after),
    recoveredAfterBackMs: recoveredAt - backAt,
    decisionsAfterRecovery: calls.filter((c) => c.startedAt >= recoveredAt).length,
  };
}

function percentile(sorted, q) {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

// ---------------------------------------------------------------- accuracy of the local fallback

/**
 * Limit 90 per hour on one key, 3 heartbeating instances (N = 3 heard live), Redis paused for
 * the whole scenario: how many requests the fleet admits on the local fallback.
 */
async function accuracy(scenario) {
  const server = await abusableServer(locateRedisServer());
  const algorithm = gcra({ limit: 90, periodMs: 3_600_000 });
  const { instances, close } = await fleet(server.port, 'fallback', algorithm, { name: 'accuracy' });
  const heard = instances.map((i) => i.heartbeat.instances());
  check(
    heard.every((n) => n === 3),
    `every instance hears N = 3, got ${heard}`,
  );
  let senders = instances;
  let joined;
  server.pause();
  if (scenario === 'one-dies') senders = instances.slice(0, 2); // instance 2 stops serving mid-outage
  if (scenario === 'one-joins') {
    // A fourth instance starts during the outage: it never hears N and uses assumeInstances (1).
    const client = new Redis({ port: server.port, host: '127.0.0.1', ...RESILIENT, lazyConnect: true });
    client.on('error', () => {});
    const heartbeat = createHeartbeat({ client, name: 'accuracy', intervalMs: 1000 });
    const limiter = withFailurePolicy(createRedisLimiter({ client, algorithm }), {
      fallback: { instances: heartbeat },
      onWarning: false,
    });
    joined = { client, heartbeat, limiter };
    senders = [...instances, joined];
  }
  if (scenario === 'skewed') senders = instances.slice(0, 1); // all traffic lands on one instance
  const admitted = senders.map(() => 0);
  for (let n = 0; n < 1000; n++) {
    const at = n % senders.length;
    if ((await senders[at].limiter.limit('acc')).allowed) admitted[at]++;
  }
  server.resume();
  if (joined) {
    await joined.heartbeat.close();
    joined.client.disconnect();
  }
  await close();
  await server.stop();
  return { scenario, admitted, total: admitted.reduce((a, b) => a + b, 0), heardInstances: heard[0] };
}

// ---------------------------------------------------------------- cost of the wrapper when healthy

/** ns per awaited decision, one hot key always admitted, bare or wrapped, on memory or Redis. */
async function overhead(store, wrapped) {
  const algorithm = gcra({ limit: 10, periodMs: 1000, burst: 1_000_000_000 });
  let server;
  let client;
  /** @type {any} */
  let limiter;
  if (store === 'memory') {
    limiter = createMemoryLimiter({ algorithm });
  } else {
    server = await abusableServer(locateRedisServer());
    client = new Redis({ port: server.port, host: '127.0.0.1', ...RESILIENT });
    await once(client, 'ready');
    limiter = createRedisLimiter({ client, algorithm });
  }
  // A generous deadline: this measures the wrapper's cost, not a busy machine's slow replies.
  if (wrapped === 'wrapped') limiter = withFailurePolicy(limiter, { onWarning: false, deadlineMs: 1000 });
  const decisions = store === 'memory' ? 1_000_000 : 20_000;
  for (let i = 0; i < decisions / 10; i++)
    check((await limiter.limit('warm')).allowed, 'a warm-up decision is admitted');
  const started = process.hrtime.bigint();
  for (let i = 0; i < decisions; i++) if (!(await limiter.limit('hot')).allowed) throw new Error('denied');
  const nsPerOp = Number(process.hrtime.bigint() - started) / decisions;
  if (wrapped === 'wrapped') check(limiter.stats().degradedAllowed === 0, 'no decision degraded');
  client?.disconnect();
  await server?.stop();
  return { store, wrapped, nsPerOp };
}

// ---------------------------------------------------------------- orchestration

const variant = variantName();
if (variant) {
  const [kind, a, b] = variant.split(':');
  sendResult(kind === 'outage' ? await outage(a, b) : kind === 'overhead' ? await overhead(a, b) : await accuracy(a));
} else if (!locateRedisServer()) {
  console.log(
    `redis-server was not found on PATH, so the failure benchmarks are skipped. Install it with:\n${INSTALL_REDIS}\n`,
  );
} else {
  const env = environment();
  const outageNames = FAULTS.flatMap((fault) => POLICIES.map((policy) => `outage:${policy}:${fault}`));
  const accuracyNames = ACCURACY.map((scenario) => `accuracy:${scenario}`);
  const results = await runVariants(FILE, [...outageNames, ...accuracyNames], { rounds: 1 });
  const outages = outageNames.map((name) => results.get(name)[0]);
  const accuracies = accuracyNames.map((name) => results.get(name)[0]);
  const overheadNames = ['memory', 'redis'].flatMap((store) => [`overhead:${store}:bare`, `overhead:${store}:wrapped`]);
  const overheadRuns = await runVariants(FILE, overheadNames, { rounds: 3 });
  const overheads = overheadNames.map((name) => ({
    ...overheadRuns.get(name)[0],
    nsPerOp: median(overheadRuns.get(name).map((r) => r.nsPerOp)),
  }));

  console.log('## Failure modes: a 2 s pause (SIGSTOP) and a restart (SIGKILL, same port)\n');
  console.log(formatEnvironment(env));
  console.log(
    `\n3 instances, ${CALLERS} callers every ${PACE_MS} ms on ${KEYS} keys, GCRA ${LIMIT_PER_S}/s per key (burst 10), deadline 50 ms, breaker 5 failures / 1 s. One run per row.\n`,
  );
  const ms = (value) => (value >= 100 ? formatInteger(value) : value.toFixed(1));
  console.log(
    formatTable(
      [
        { header: 'fault' },
        { header: 'policy' },
        { header: 'server down ms', align: 'right' },
        { header: 'client outage ms', align: 'right' },
        { header: 'decisions', align: 'right' },
        { header: 'admitted', align: 'right' },
        { header: 'limit allows', align: 'right' },
        { header: 'denied', align: 'right' },
        { header: 'errors', align: 'right' },
        { header: 'p50 ms', align: 'right' },
        { header: 'p99 ms', align: 'right' },
        { header: 'max ms', align: 'right' },
        { header: 'Redis calls while down', align: 'right' },
        { header: 'degraded after', align: 'right' },
      ],
      outages.map((r) => [
        r.fault,
        r.policy,
        formatInteger(r.serverDownMs),
        formatInteger(r.windowMs),
        formatInteger(r.decisions),
        formatInteger(r.admitted),
        formatInteger(r.ideal),
        formatInteger(r.denied),
        formatInteger(r.errors),
        ms(r.p50Ms),
        ms(r.p99Ms),
        ms(r.maxMs),
        formatInteger(r.redisCallsWhileDown),
        `${r.degradedAfterRecovery} / ${formatInteger(r.decisionsAfterRecovery)}`,
      ]),
    ),
  );
  console.log('\n## Local fallback accuracy: limit 90 per hour, 3 heartbeating instances, Redis paused\n');
  console.log(
    formatTable(
      [
        { header: 'scenario' },
        { header: 'N heard', align: 'right' },
        { header: 'admitted per instance', align: 'right' },
        { header: 'fleet admitted', align: 'right' },
        { header: 'limit', align: 'right' },
      ],
      accuracies.map((r) => [r.scenario, String(r.heardInstances), r.admitted.join(' + '), String(r.total), '90']),
    ),
  );
  console.log(
    '\n## Cost of withFailurePolicy on a healthy store (awaited decisions, one hot key, median of 3 processes)\n',
  );
  console.log(
    formatTable(
      [
        { header: 'store' },
        { header: 'bare ns/op', align: 'right' },
        { header: 'wrapped ns/op', align: 'right' },
        { header: 'added ns', align: 'right' },
      ],
      ['memory', 'redis'].map((store) => {
        const bare = overheads.find((r) => r.store === store && r.wrapped === 'bare').nsPerOp;
        const wrapped = overheads.find((r) => r.store === store && r.wrapped === 'wrapped').nsPerOp;
        return [store, formatInteger(bare), formatInteger(wrapped), formatInteger(wrapped - bare)];
      }),
    ),
  );
  const file = saveResults('failure', { environment: env, outages, accuracies, overheads });
  console.log(`\nSaved ${file}\n`);
}

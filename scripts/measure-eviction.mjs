// Measures what Redis eviction does to a limit (docs/deployment.md, "Memory and eviction"):
// a key limited to 5 per hour is hit 100 times while other traffic fills a 2 MB maxmemory, under
// each eviction policy, on redis-server and valkey-server; then MEMORY USAGE of one key per
// algorithm. Needs `npm run build` first. Usage: node scripts/measure-eviction.mjs
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { fixedWindow, gcra, slidingWindowCounter, slidingWindowLog, tokenBucket } from '../dist/index.js';
import { createRedisLimiter } from '../dist/redis.js';

const HOUR = 3_600_000;

async function start(binary, args) {
  // A unix socket in a fresh directory: no TCP port to find, nothing reachable from outside.
  const dir = mkdtempSync(join(tmpdir(), 'sluice-eviction-'));
  const path = join(dir, 'redis.sock');
  const child = spawn(binary, ['--port', '0', '--unixsocket', path, '--save', '', '--appendonly', 'no', ...args]);
  let output = '';
  await new Promise((resolve, reject) => {
    child.stdout.on('data', (chunk) => {
      output += chunk;
      if (/ready to accept connections/i.test(output)) resolve();
    });
    child.once('exit', (code) => reject(new Error(`${binary} exited ${code}: ${output}`)));
  });
  child.stdout.resume();
  const client = new Redis({ path, maxRetriesPerRequest: 0 });
  client.on('error', () => {});
  return {
    client,
    async stop() {
      client.disconnect();
      child.kill('SIGKILL');
      await once(child, 'exit');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** 100 hits on one key limited to 5 per hour, each after 20 other writes of 1 KB (app data, no TTL) and 20 other limiter keys. */
async function evictionRun(binary, policy) {
  const server = await start(binary, ['--maxmemory', '2mb', '--maxmemory-policy', policy]);
  const limiter = createRedisLimiter({
    client: server.client,
    algorithm: gcra({ limit: 5, periodMs: HOUR }),
    onWarning: false,
  });
  const filler = 'x'.repeat(1024);
  const counts = { admitted: 0, denied: 0, errors: 0, fillerErrors: 0, firstError: undefined };
  let other = 0;
  for (let hit = 0; hit < 100; hit++) {
    const writes = Array.from({ length: 20 }, (_, i) =>
      server.client.set(`app:${hit}:${i}`, filler).catch(() => counts.fillerErrors++),
    );
    const limits = Array.from({ length: 20 }, () => limiter.limit(`other-${other++}`).catch(() => {}));
    await Promise.all([...writes, ...limits]);
    try {
      const decision = await limiter.limit('victim');
      counts[decision.allowed ? 'admitted' : 'denied']++;
    } catch {
      counts.errors++;
      counts.firstError ??= hit + 1;
    }
  }
  const info = await server.client.info('stats');
  counts.evicted = Number(/evicted_keys:(\d+)/.exec(info)?.[1]);
  await server.stop();
  return counts;
}

/** MEMORY USAGE of the keys one limiter writes for one key after `hits` admitted hits. */
async function memoryUsage(binary) {
  const server = await start(binary, []);
  const algorithms = {
    gcra: gcra({ limit: 100, periodMs: 60_000 }),
    'token-bucket': tokenBucket({ capacity: 100, rate: 100, periodMs: 60_000 }),
    'fixed-window': fixedWindow({ limit: 100, windowMs: 60_000 }),
    'sliding-window-counter': slidingWindowCounter({ limit: 100, windowMs: 60_000 }),
    'sliding-window-log': slidingWindowLog({ limit: 100, windowMs: 60_000 }),
  };
  const rows = [];
  for (const [name, algorithm] of Object.entries(algorithms)) {
    const row = { algorithm: name };
    for (const hits of [1, 100]) {
      const prefix = `m:${name}:${hits}:`;
      const limiter = createRedisLimiter({ client: server.client, algorithm, prefix, onWarning: false });
      for (let i = 0; i < hits; i++) await limiter.limit('user:12345');
      let bytes = 0;
      for (const key of await server.client.keys(`${prefix}*`))
        bytes += Number(await server.client.memory('USAGE', key));
      row[`${hits} hit${hits > 1 ? 's' : ''}`] = bytes;
    }
    rows.push(row);
  }
  await server.stop();
  return rows;
}

for (const binary of ['redis-server', 'valkey-server']) {
  const version = spawn(binary, ['--version']);
  let text = '';
  version.stdout.on('data', (chunk) => (text += chunk));
  await once(version, 'exit');
  console.log(`\n## ${text.trim()}\n`);
  console.log('| policy | admitted of 100 (limit 5) | denied | store errors (first at hit) | keys evicted |');
  console.log('|---|---|---|---|---|');
  for (const policy of ['allkeys-lru', 'volatile-lru', 'noeviction']) {
    const c = await evictionRun(binary, policy);
    console.log(
      `| ${policy} | ${c.admitted} | ${c.denied} | ${c.errors}${c.firstError ? ` (${c.firstError})` : ''} | ${c.evicted} |`,
    );
  }
  console.log('\n| algorithm | bytes after 1 hit | bytes after 100 hits |');
  console.log('|---|---|---|');
  for (const row of await memoryUsage(binary))
    console.log(`| ${row.algorithm} | ${row['1 hit']} | ${row['100 hits']} |`);
}

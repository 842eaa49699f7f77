import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { connect } from 'node:net';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FleetReport } from '../../demo/fleet/run.js';
import { runFleet } from '../../demo/fleet/run.js';
import { type RedisServer, startRedis } from '../support/redis-server.js';
import { type Compiled, compile } from './compile.js';

let compiled: Compiled;
let cliPath: string;
let instanceModule: string;
let server: RedisServer;
let admin: Redis;

beforeAll(async () => {
  [compiled, server] = await Promise.all([
    compile({ cli: 'demo/cli.ts', 'fleet-instance': 'demo/fleet/instance-main.ts' }),
    startRedis(),
  ]);
  cliPath = compiled.path('cli');
  instanceModule = compiled.path('fleet-instance');
  admin = server.connect();
});
afterAll(async () => {
  compiled?.remove();
  await server?.stop();
});

interface Cli {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
}

function startCli(args: readonly string[], env: NodeJS.ProcessEnv = process.env): Cli {
  const child = spawn(process.execPath, [cliPath, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = once(child, 'close').then(() => child.exitCode);
  return { child, stdout: () => stdout, stderr: () => stderr, exited };
}

/** True once nothing accepts connections on `port` (polls for up to 3 s). */
async function closed(port: number): Promise<boolean> {
  for (let attempt = 0; attempt < 30; attempt++) {
    const refused = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(false);
      });
      socket.once('error', () => resolve(true));
    });
    if (refused) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return false;
}

function row(report: FleetReport, load: string, mode: string) {
  const found = report.rows.find((each) => each.load === load && each.mode === mode);
  if (!found) throw new Error(`no row '${load}, ${mode}'`);
  return found;
}

// Each row forks its own instances: on a loaded 2-core machine a row can take seconds.
describe('fleet demo against a real redis-server', { timeout: 180_000 }, () => {
  it('admits 300 with a memory limiter per instance, 100 with shared Redis GCRA, at 1 round trip per request', async () => {
    const report = await runFleet({
      requests: 1000,
      limit: 100,
      periodMs: 3_600_000,
      instances: 3,
      modes: ['memory', 'redis'],
      loads: ['round-robin'],
      redis: { url: server.url },
      instanceModule,
    });

    const memory = row(report, 'round-robin', 'memory');
    expect(memory).toMatchObject({ ran: true, admitted: 300, denied: 700, errors: 0, redisRoundTrips: 0 });
    expect(memory.sentPerInstance).toEqual([334, 333, 333]);
    expect(memory.admittedPerInstance).toEqual([100, 100, 100]);

    const shared = row(report, 'round-robin', 'redis');
    expect(shared).toMatchObject({ ran: true, admitted: 100, denied: 900, errors: 0, redisRoundTrips: 1000 });
    // Round-robin from the start: instance i served requests i, i+3, … until the 100th admission.
    expect(shared.admittedPerInstance).toEqual([34, 33, 33]);
    expect(report.redis).toMatchObject({ url: server.url, startedHere: false });
  });

  // Seed 000's leasing table, on real processes: the round trips are the seed's (26 at lease 5,
  // 11 at lease 20: leases until Redis runs dry, then one refusal of a lease and one of the
  // shortfall per instance), and under skewed load lease 20 strands 2 × 15 units unless returned.
  it('leased rows: exactly 100 under round-robin at 26 and 11 round trips; skewed lease 20 admits 70, or 100 with return', async () => {
    const options = {
      requests: 1000,
      limit: 100,
      periodMs: 3_600_000,
      instances: 3,
      redis: { url: server.url },
      instanceModule,
    };
    const uniform = await runFleet({ ...options, modes: ['leased-5', 'leased-20'], loads: ['round-robin'] });
    expect(row(uniform, 'round-robin', 'leased-5')).toMatchObject({ admitted: 100, errors: 0, redisRoundTrips: 26 });
    expect(row(uniform, 'round-robin', 'leased-20')).toMatchObject({ admitted: 100, errors: 0, redisRoundTrips: 11 });

    const skewed = await runFleet({ ...options, modes: ['leased-20', 'leased-20-return'], loads: ['skewed'] });
    const stranded = row(skewed, 'skewed', 'leased-20');
    expect(stranded.sentPerInstance).toEqual([5, 5, 990]);
    expect(stranded).toMatchObject({ admitted: 70, admittedPerInstance: [5, 5, 60], errors: 0 });
    expect(row(skewed, 'skewed', 'leased-20-return')).toMatchObject({ admitted: 100, admittedPerInstance: [5, 5, 90] });
  });

  it('leaves no keys behind on a Redis it did not start', async () => {
    await runFleet({
      requests: 30,
      limit: 5,
      periodMs: 3_600_000,
      instances: 2,
      modes: ['redis'],
      loads: ['round-robin'],
      redis: { url: server.url },
      instanceModule,
    });
    expect(await admin.keys('sluice:fleet:*')).toEqual([]);
  });

  it('scales with its options: 2 instances at limit 10 admit 20 (memory) and 10 (Redis)', async () => {
    const report = await runFleet({
      requests: 50,
      limit: 10,
      periodMs: 60_000,
      instances: 2,
      modes: ['memory', 'redis'],
      loads: ['round-robin'],
      redis: { url: server.url },
      instanceModule,
    });
    expect(row(report, 'round-robin', 'memory')).toMatchObject({ admitted: 20, admittedPerInstance: [10, 10] });
    expect(row(report, 'round-robin', 'redis')).toMatchObject({ admitted: 10, admittedPerInstance: [5, 5] });
    expect(row(report, 'round-robin', 'redis').redisRoundTrips).toBe(50);
  });

  it('rejects an unknown mode before starting anything', async () => {
    await expect(
      runFleet({ requests: 1, limit: 1, periodMs: 1000, instances: 1, modes: ['nope'], instanceModule }),
    ).rejects.toThrow(
      "unknown fleet mode 'nope'; known: memory, redis, leased-5, leased-20, leased-5-return, leased-20-return",
    );
  });
});

describe('sluice fleet (the CLI)', { timeout: 180_000 }, () => {
  it('starts a throwaway redis-server, prints the JSON report, and stops the server and instances', async () => {
    const cli = startCli(['fleet', '--json', '--requests', '300', '--limit', '50', '--modes', 'memory,redis'], {
      ...process.env,
      REDIS_URL: '',
    });
    expect(await cli.exited).toBe(0);
    const report = JSON.parse(cli.stdout()) as FleetReport;
    expect(report.redis).toMatchObject({ startedHere: true });
    expect(report.loads.map((load) => load.name)).toEqual(['round-robin', 'skewed']);
    expect(row(report, 'round-robin', 'memory')).toMatchObject({ admitted: 150, admittedPerInstance: [50, 50, 50] });
    expect(row(report, 'round-robin', 'redis')).toMatchObject({ admitted: 50, redisRoundTrips: 300 });
    // Skewed: 5 requests to each instance, then the rest to the last one.
    expect(row(report, 'skewed', 'memory')).toMatchObject({ admitted: 60, admittedPerInstance: [5, 5, 50] });
    expect(row(report, 'skewed', 'redis')).toMatchObject({ admitted: 50, redisRoundTrips: 300 });

    const redisPort = Number(/on 127\.0\.0\.1:(\d+)/.exec(cli.stderr())?.[1]);
    const instancePorts = [...cli.stderr().matchAll(/ports ([\d, ]+) \(/g)].flatMap((match) =>
      (match[1] as string).split(', ').map(Number),
    );
    expect(instancePorts).toHaveLength(12);
    for (const port of [redisPort, ...instancePorts]) expect(await closed(port)).toBe(true);
  });

  it('prints the table for people', async () => {
    const cli = startCli(['fleet', '--redis-url', server.url, '--loads', 'round-robin', '--modes', 'memory,redis']);
    expect(await cli.exited).toBe(0);
    expect(cli.stdout()).toMatch(/\| memory limiter in each instance\s+\|\s+300 \|\s+3\.00× \| 100 \/ 100 \/ 100 /);
    expect(cli.stdout()).toMatch(
      /\| shared Redis GCRA\s+\|\s+100 \|\s+1\.00× \| 34 \/ 33 \/ 33 .*\|\s+1,000 \|\s+1\.000 \|/,
    );
  });

  it('without redis-server on PATH, says how to install it and runs the memory row (exit 0)', async () => {
    const cli = startCli(['fleet', '--requests', '300', '--loads', 'round-robin'], { PATH: '/nonexistent' });
    expect(await cli.exited).toBe(0);
    expect(cli.stdout()).toContain('sudo apt-get install redis-server');
    expect(cli.stdout()).toMatch(/\| memory limiter in each instance\s+\|\s+300 \|/);
    expect(cli.stdout()).toMatch(/\| shared Redis GCRA\s+\|.*skipped: no Redis/);
    expect(cli.stdout()).toMatch(/\| Redis GCRA, leased 20 at a time\s+\|.*skipped: no Redis/);
  });

  it('on SIGINT stops the redis-server and the instances it started', async () => {
    const cli = startCli(['fleet', '--requests', '10000000'], { ...process.env, REDIS_URL: '' });
    const started = /on 127\.0\.0\.1:(\d+)[\s\S]*ports ([\d, ]+) \(/;
    while (!started.test(cli.stderr())) await once(cli.child.stderr as NodeJS.ReadableStream, 'data');
    const [, redisPort, instancePorts] = started.exec(cli.stderr()) as RegExpExecArray;
    cli.child.kill('SIGINT');
    expect(await cli.exited).toBe(130);
    for (const port of [redisPort, ...(instancePorts as string).split(', ')].map(Number)) {
      expect(await closed(port)).toBe(true);
    }
  });

  it('rejects a bad option with a message and exit code 1', async () => {
    const cli = startCli(['fleet', '--instances', '0']);
    expect(await cli.exited).toBe(1);
    expect(cli.stderr()).toContain('--instances must be an integer in 1..');
  });
});

// --metrics: every instance serves sluice/otel metrics through @opentelemetry/exporter-prometheus;
// what the demo scrapes must agree with what its load driver and INFO commandstats counted.
describe('sluice fleet --metrics', { timeout: 180_000 }, () => {
  const small = ['--requests', '60', '--limit', '10', '--instances', '2', '--loads', 'round-robin'];

  it("each instance's scraped counts agree with the table: admissions, denials, round trips", async () => {
    const cli = startCli([
      'fleet',
      '--metrics',
      '--json',
      '--redis-url',
      server.url,
      '--modes',
      'memory,redis,leased-5',
      ...small,
    ]);
    expect(await cli.exited).toBe(0);
    const report = JSON.parse(cli.stdout()) as FleetReport;
    const total = (values: readonly (number | null)[]) => values.reduce<number>((sum, value) => sum + (value ?? 0), 0);
    for (const each of report.rows) {
      const scraped = each.scraped ?? [];
      expect(scraped, each.mode).toHaveLength(2);
      expect(scraped.map((instance) => instance.allowed)).toEqual(each.admittedPerInstance);
      expect(scraped.map((instance) => instance.denied)).toEqual(
        each.sentPerInstance.map((sent, i) => sent - (each.admittedPerInstance[i] as number)),
      );
      expect(total(scraped.map((instance) => instance.denied))).toBe(each.denied);
      expect(total(scraped.map((instance) => instance.degraded))).toBe(0);
    }
    const memory = row(report, 'round-robin', 'memory');
    expect(memory.admittedPerInstance).toEqual([10, 10]);
    expect(memory.scraped?.map((instance) => instance.storeRoundTrips)).toEqual([null, null]);
    expect(memory.scraped?.map((instance) => instance.leaseRemoteCalls)).toEqual([null, null]);

    // One histogram sample per round trip the server executed (the demo loads the scripts first).
    const shared = row(report, 'round-robin', 'redis');
    expect(shared).toMatchObject({ admitted: 10, denied: 50, redisRoundTrips: 60 });
    expect(shared.scraped?.map((instance) => instance.storeRoundTrips)).toEqual([30, 30]);
    for (const instance of shared.scraped ?? []) expect(instance.storeP99Ms).toBeGreaterThan(0);

    // Leasing: every remote call is one timed round trip; the rest of the admissions are lease hits.
    const leased = row(report, 'round-robin', 'leased-5');
    expect(leased.admitted).toBe(10);
    const scraped = leased.scraped ?? [];
    expect(total(scraped.map((instance) => instance.leaseRemoteCalls))).toBe(leased.redisRoundTrips);
    expect(total(scraped.map((instance) => instance.storeRoundTrips))).toBe(leased.redisRoundTrips);
    expect(total(scraped.map((instance) => instance.leaseLocalHits))).toBe(8); // 2 leases of 5, 1 spent by each taker
  });

  it('prints the scrape summary under the table; without --metrics there is none', async () => {
    const [withMetrics, without] = [
      startCli(['fleet', '--metrics', '--redis-url', server.url, '--modes', 'redis', ...small]),
      startCli(['fleet', '--redis-url', server.url, '--modes', 'redis', ...small]),
    ];
    expect(await withMetrics.exited).toBe(0);
    expect(withMetrics.stdout()).toContain("Scrape summary: each instance's Prometheus /metrics");
    for (const instance of [1, 2]) {
      expect(withMetrics.stdout()).toMatch(
        new RegExp(
          `\\| shared Redis GCRA\\s+\\|\\s+${instance} \\|\\s+5 \\|\\s+25 \\|\\s+30 \\|\\s+[\\d.]+ ms \\|\\s+— \\|\\s+— \\|`,
        ),
      );
    }
    expect(await without.exited).toBe(0);
    expect(without.stdout()).not.toContain('Scrape summary');
  });
});

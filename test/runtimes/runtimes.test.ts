import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RedisServer, startRedis } from '../support/redis-server.js';
import { bun, deno, type Runtime } from './binaries.js';
import { registerConformance } from './conformance.js';
import { registerHonoChecks } from './hono-check.js';

// Bun and Deno each run the conformance suite and the Hono checks from the built package (see
// bun.ts, deno.ts) against one redis-server this file starts; each reports JUnit XML, and every
// test registered must have run and passed.
const run = promisify(execFile);
const runtimes: { name: string; locate(): Runtime; args(junit: string): string[] }[] = [
  {
    name: 'bun',
    locate: bun,
    args: (junit) => ['test', '--reporter=junit', `--reporter-outfile=${junit}`, './test/runtimes/bun.ts'],
  },
  {
    name: 'deno',
    locate: deno,
    // Type-checked by tsc with the rest; `.js` specifiers name the `.ts` files, as under NodeNext.
    args: (junit) => ['test', '-A', '--no-check', '--sloppy-imports', `--junit-path=${junit}`, 'test/runtimes/deno.ts'],
  },
];

let redis: RedisServer;
let dir: string;
beforeAll(async () => {
  redis = await startRedis();
  dir = mkdtempSync(join(tmpdir(), 'sluice-runtimes-'));
});
afterAll(async () => {
  await redis?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe.each(runtimes)('$name', (runtime) => {
  it('passes every conformance test and Hono check', { timeout: 120_000 }, async () => {
    const { path, version } = runtime.locate();
    const junit = join(dir, `${runtime.name}.xml`);
    const result = await run(path, runtime.args(junit), {
      env: { ...process.env, SLUICE_REDIS_URL: redis.url, NO_COLOR: '1' },
      maxBuffer: 64 * 1024 * 1024,
    }).catch((error: { stdout: string; stderr: string }) => error);
    // No report at all (the runtime failed to start) reads as NaN failures, shown with the output.
    const report = parseJunit(existsSync(junit) ? readFileSync(junit, 'utf8') : '');
    expect(report.failures, `${version}\n${result.stdout}\n${result.stderr}`).toBe(0);
    expect(report.leaves).toBe(registeredTests());
    console.log(`${version}: ${report.leaves} passed`);
  });
});

/** How many tests bun.ts and deno.ts register: the same registration, counted here. */
function registeredTests(): number {
  let count = 0;
  const counting = { describe: (_: string, body: () => void) => body(), it: () => count++, after: () => {} };
  registerConformance(counting, 'redis://unused');
  registerHonoChecks(counting, { serve: () => Promise.reject(new Error('counting only')), clientAddress: () => '' });
  return count;
}

/**
 * Test cases and failures (with errors outside any test, which Deno counts apart) of a JUnit
 * report; Deno also lists each `describe` as a case, Bun does not.
 */
function parseJunit(xml: string): { leaves: number; failures: number } {
  const root = /<testsuites[^>]*>/.exec(xml)?.[0] ?? '';
  const count = (name: string) => Number(new RegExp(`\\b${name}="(\\d+)"`).exec(root)?.[1] ?? 0);
  const failures = root === '' ? Number.NaN : count('failures') + count('errors');
  const names = [...xml.matchAll(/<testcase name="([^"]*)"/g)].map((m) => (m[1] ?? '').replaceAll('&gt;', '>'));
  const leaves = names.filter((name) => !names.some((other) => other.startsWith(`${name} > `)));
  return { leaves: leaves.length, failures };
}

import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { libraryEntries } from '../../tsup.config.js';

/*
 * What `npm publish` would ship, built fresh from src/: only the library's entries and chunks,
 * the docs the README links to, and the README. A consumer outside this repository (no
 * node_modules above it, so no fast-check) loads `sluice/testing`.
 */
const root = fileURLToPath(new URL('../..', import.meta.url));
let dir: string;
let files: string[];
let tarball: string;

beforeAll(() => {
  execFileSync('npx', ['tsup', '--silent'], { cwd: root, stdio: 'ignore' });
  dir = mkdtempSync(join(tmpdir(), 'sluice-pack-'));
  const [packed] = JSON.parse(
    execFileSync('npm', ['pack', '--json', '--pack-destination', dir], { cwd: root, encoding: 'utf8' }),
  ) as { filename: string; files: { path: string }[] }[];
  if (!packed) throw new Error('npm pack printed no package');
  files = packed.files.map((file) => file.path).sort();
  tarball = join(dir, packed.filename);
}, 300_000); // a build and a pack: minutes when the cores are shared

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('the packed tarball', () => {
  it('holds only dist/, docs/, the README, the license and package.json', () => {
    const outside = files.filter(
      (path) => !/^(dist\/|docs\/[^/]+\.(md|svg)$|README\.md$|LICENSE$|package\.json$)/.test(path),
    );
    expect(outside).toEqual([]);
  });

  it('ships no demo: no cli, no fleet files, and no bin', () => {
    expect(files.filter((path) => /cli|fleet/.test(path))).toEqual([]);
    const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as Record<string, unknown>;
    expect(manifest.bin).toBeUndefined();
    expect(Object.keys(manifest.dependencies as object)).not.toContain('cac');
  });

  it("has every library entry's ESM, CJS and types, and no other entry", () => {
    const entries = files.filter(
      (path) => /^dist\/[^/]+\.(js|cjs|d\.ts|d\.cts)$/.test(path) && !/chunk-|-[\w-]{8}\.d\./.test(path),
    );
    const expected = Object.keys(libraryEntries).flatMap((name) =>
      ['js', 'cjs', 'd.ts', 'd.cts'].map((ext) => `dist/${name}.${ext}`),
    );
    expect(entries.sort()).toEqual(expected.sort());
  });

  it('contains every file the README links to', () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    const links = [...readme.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)]
      .map((match) => match[1] as string)
      .filter((target) => !/^[a-z]+:/.test(target));
    expect(links.length).toBeGreaterThan(0);
    expect([...new Set(links)].filter((target) => !files.includes(target))).toEqual([]);
  });

  it('loads sluice and sluice/testing in a consumer without fast-check, which the property names when run', () => {
    const consumer = join(dir, 'consumer');
    mkdirSync(join(consumer, 'node_modules', 'sluice'), { recursive: true });
    execFileSync('tar', ['-xzf', tarball, '-C', join(consumer, 'node_modules', 'sluice'), '--strip-components=1']);
    // The property runs through runConformance's own describe/it, given a target over a memory limiter.
    writeFileSync(
      join(consumer, 'check.mjs'),
      `import { createMemoryLimiter, gcra } from 'sluice';
import { manualClock, runConformance } from 'sluice/testing';
const tests = new Map();
runConformance({
  name: 'memory',
  create: (algorithm, clock) => createMemoryLimiter({ algorithm, clock: clock.now }),
  test: { describe: (_name, body) => body(), it: (name, body) => tests.set(name, body) },
  propertyRuns: 1,
});
const property = [...tests].find(([name]) => name.includes('reference-model'));
const message = await property[1]().then(() => 'passed', (error) => error.message);
console.log(JSON.stringify({ clock: manualClock(5).now(), gcra: gcra({ limit: 1, periodMs: 1000 }).name, message }));
`,
    );
    const out = execFileSync(process.execPath, ['check.mjs'], { cwd: consumer, encoding: 'utf8' });
    expect(JSON.parse(out)).toEqual({
      clock: 5,
      gcra: 'gcra',
      message: "the 'reference-model' property needs fast-check: npm install --save-dev fast-check",
    });
  });
});

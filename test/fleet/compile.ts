import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** Entry points compiled from src/ (so tests never run a stale dist/). */
export interface Compiled {
  /** The output file of an entry, by the entry's name. */
  path(name: string): string;
  remove(): void;
}

/** `sluice` and each `sluice/<name>` the package exports, as src/<name>.ts or src/<name>/index.ts. */
function sourceAliases(): Record<string, string> {
  const { exports } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { exports: object };
  return Object.fromEntries(
    Object.keys(exports)
      .filter((subpath) => !subpath.endsWith('.json'))
      .map((subpath) => {
        const name = subpath === '.' ? 'index' : subpath.slice(2);
        const file = join(root, 'src', `${name}.ts`);
        return [`sluice${subpath.slice(1)}`, existsSync(file) ? file : join(root, 'src', name, 'index.ts')];
      }),
  );
}

/**
 * Bundles entries (paths relative to the repository) the way tsup does: ESM, shared chunks,
 * packages left external, `sluice` and every `sluice/*` subpath read from src/. The output sits under
 * node_modules/.cache so packages (`ioredis`, `cac`, the frameworks) resolve, beside a package.json that makes it ESM
 * and gives the CLI a version to print.
 */
export async function compile(entries: Record<string, string>): Promise<Compiled> {
  const dir = join(root, 'node_modules', '.cache', `sluice-test-${process.pid}-${Date.now()}`);
  mkdirSync(join(dir, 'dist'), { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module', version: '0.0.0-test' }));
  await build({
    entryPoints: Object.fromEntries(Object.entries(entries).map(([name, path]) => [name, join(root, path)])),
    outdir: join(dir, 'dist'),
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    packages: 'external',
    alias: sourceAliases(),
    logLevel: 'silent',
  });
  return {
    path: (name) => join(dir, 'dist', `${name}.js`),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

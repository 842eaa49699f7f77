import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { libraryEntries } from '../../tsup.config.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** Entry points compiled from source (so tests never run a stale dist/). */
export interface Compiled {
  /** The output file of an entry, by the entry's name. */
  path(name: string): string;
  remove(): void;
}

/** `sluice` and each `sluice/<name>` the package exports, read from the source file of its tsup entry. */
function sourceAliases(): Record<string, string> {
  return Object.fromEntries(
    Object.entries(libraryEntries).map(([name, path]) => [
      name === 'index' ? 'sluice' : `sluice/${name}`,
      join(root, path),
    ]),
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
  mkdirSync(join(dir, 'demo', 'dist'), { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module', version: '0.0.0-test' }));
  await build({
    entryPoints: Object.fromEntries(Object.entries(entries).map(([name, path]) => [name, join(root, path)])),
    outdir: join(dir, 'demo', 'dist'),
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
    path: (name) => join(dir, 'demo', 'dist', `${name}.js`),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** A runtime's executable, from the npm packages in devDependencies. */
export interface Runtime {
  path: string;
  version: string;
}

/**
 * The first candidate that answers `--version`. A package's postinstall links its platform
 * package's binary into its own folder; where npm runs no install scripts, the binary is still
 * in the platform package, so both places are candidates.
 */
export function locate(name: string, candidates: readonly string[]): Runtime {
  for (const candidate of candidates) {
    const path = `${root}${candidate}`;
    if (!existsSync(path)) continue;
    let version: string;
    try {
      version = execFileSync(path, ['--version'], { encoding: 'utf8', stdio: 'pipe' }).split('\n')[0] ?? '';
    } catch {
      continue;
    }
    return { path, version: version.startsWith(name) ? version : `${name} ${version}` };
  }
  throw new Error(`no ${name} binary in ${candidates.join(', ')}: \`npm ci\` installs it (devDependency ${name})`);
}

export const bun = () =>
  locate('bun', [
    'node_modules/bun/bin/bun.exe',
    'node_modules/@oven/bun-linux-x64/bin/bun',
    'node_modules/@oven/bun-linux-x64-baseline/bin/bun',
  ]);

export const deno = () => locate('deno', ['node_modules/@deno/linux-x64-glibc/deno', 'node_modules/deno/deno']);

import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { cpus } from 'node:os';

const require = createRequire(import.meta.url);

/**
 * A variable bench/run.mjs or a section's parent process sets for its variant processes.
 * @param {string} name
 * @returns {string}
 */
export function envOf(name) {
  const value = process.env[name];
  if (value === undefined) throw new Error(`${name} is not set: run the section with npm run bench`);
  return value;
}

/** The version of an installed package. */
export function packageVersion(name) {
  return JSON.parse(readFileSync(require.resolve(`${name}/package.json`), 'utf8')).version;
}

/** What the figures depend on: runtime, machine and library versions. */
export function environment(extra = {}) {
  const cpu = cpus();
  return {
    node: process.version,
    v8: process.versions.v8,
    platform: `${process.platform} ${process.arch}`,
    cpu: `${cpu[0]?.model ?? 'unknown'} × ${cpu.length}`,
    sluice: JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version,
    'rate-limiter-flexible': packageVersion('rate-limiter-flexible'),
    ioredis: packageVersion('ioredis'),
    mitata: packageVersion('mitata'),
    ...extra,
  };
}

/** One Markdown line listing the versions. */
export function formatEnvironment(env) {
  return Object.entries(env)
    .map(([name, value]) => `${name} ${value}`)
    .join(' · ');
}

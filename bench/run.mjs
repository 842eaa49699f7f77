/*
 * `npm run bench`: runs every section, bench/<name>.mjs, one after another in its own process.
 * Each section prints its own Markdown tables and writes bench/results/<name>.json.
 * A new section is a new bench/<name>.mjs file (helpers live in bench/lib/): memory and
 * redis run first, the others in name order. `node bench/run.mjs lease redis` runs only those.
 */
import { fork } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { owned } from './lib/owned.mjs';

const FIRST = ['memory', 'redis'];
const dir = fileURLToPath(new URL('.', import.meta.url));
const all = readdirSync(dir)
  .filter((file) => file.endsWith('.mjs') && file !== 'run.mjs')
  .map((file) => file.slice(0, -'.mjs'.length))
  .sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
const wanted = process.argv.slice(2);
const unknown = wanted.filter((name) => !all.includes(name));
if (unknown.length > 0) {
  console.error(`unknown bench section(s): ${unknown.join(', ')}; known: ${all.join(', ')}`);
  process.exit(2);
}
const sections = wanted.length > 0 ? all.filter((name) => wanted.includes(name)) : all;

console.log(
  `# Sluice benchmarks\n\nSections: ${sections.join(', ')}. Load average at start: ${loadavg()
    .map((n) => n.toFixed(2))
    .join(', ')}.\n`,
);
const failed = [];
const started = performance.now();
for (const name of sections) {
  const sectionStarted = performance.now();
  const code = await new Promise((resolve) => {
    owned(fork(`${dir}${name}.mjs`, [], { stdio: 'inherit' })).once('exit', (exitCode, signal) =>
      resolve(signal ?? exitCode),
    );
  });
  const seconds = ((performance.now() - sectionStarted) / 1000).toFixed(1);
  if (code !== 0) failed.push(name);
  console.log(`_${name}: ${code === 0 ? 'done' : `failed (${code})`} in ${seconds} s_\n`);
}
console.log(`Total ${((performance.now() - started) / 1000).toFixed(1)} s.`);
if (failed.length > 0) {
  console.error(`failed sections: ${failed.join(', ')}`);
  process.exitCode = 1;
}

function rank(name) {
  const at = FIRST.indexOf(name);
  return at === -1 ? FIRST.length : at;
}

/*
 * Fresh process per variant, alternating order, medians (after hono's and lru-cache's
 * benchmark programs): a section calls runVariants() in its orchestrating process; the same
 * file, started with `--variant <name>`, measures that one variant and calls sendResult().
 */
import { fork } from 'node:child_process';
import { owned } from './owned.mjs';

/** The variant this process was started to measure, or undefined in the orchestrating process. */
export function variantName() {
  const at = process.argv.indexOf('--variant');
  return at === -1 ? undefined : process.argv[at + 1];
}

/**
 * Hands a variant's measurement to the orchestrator and exits (open sockets or timers don't
 * matter); prints it when the variant was started by hand (`node bench/x.mjs --variant name`).
 */
export function sendResult(result) {
  if (process.send) process.send(result, () => process.exit(0));
  else {
    console.log(JSON.stringify(result));
    process.exit(0);
  }
}

/**
 * Runs each variant `rounds` times, each in a fresh `node <file> --variant <name>`, in
 * forward order on even rounds and reverse order on odd ones (so no variant always runs
 * first, on a cold or a warm machine). Resolves to each variant's results in round order.
 * @param {string} file
 * @param {readonly string[]} names
 * @param {{ rounds?: number, execArgv?: string[], env?: NodeJS.ProcessEnv }} [options]
 * @returns {Promise<{ get(name: string): any[] } & Map<string, any[]>>} (every name has its list)
 */
export async function runVariants(file, names, { rounds = 3, execArgv = [], env = process.env } = {}) {
  /** @type {Map<string, any[]>} */
  const results = new Map(names.map((name) => [name, []]));
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? names : [...names].reverse();
    for (const name of order) results.get(name)?.push(await runVariant(file, name, execArgv, env));
  }
  return /** @type {any} */ (results);
}

function runVariant(file, name, execArgv, env) {
  return new Promise((resolve, reject) => {
    const child = owned(
      fork(file, ['--variant', name], { execArgv, env, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }),
    );
    let result;
    child.once('message', (message) => {
      result = message;
    });
    child.once('exit', (code, signal) => {
      if (code === 0 && result !== undefined) resolve(result);
      else reject(new Error(`variant '${name}' of ${file} failed (${signal ?? `exit ${code}`})`));
    });
  });
}

/** The median of numbers (mean of the middle two for an even count). */
export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** Throws when a correctness check fails, so a wrong implementation is never timed. */
export function check(condition, message) {
  if (!condition) throw new Error(`correctness check failed: ${message}`);
}

/*
 * Counting Redis round trips exactly, from the server's side: `INFO commandstats` before and
 * after a run. Commands a Lua script runs (GET, SET, PTTL, TIME…) are counted there too, so a
 * round trip is a call of a command a client sends to run a decision: a script call
 * (EVAL/EVALSHA and their _RO forms, FCALL) or a transaction's EXEC. A NOSCRIPT reply is a
 * round trip too (`calls` includes failed calls), and so is a rejected call.
 */

/** @typedef {ReadonlyMap<string, number>} CommandStats `calls + rejected_calls` per command name, as `INFO commandstats` reports them. */

/** @typedef {{ info(section: string): Promise<string> }} InfoClient Anything with ioredis's `info(section)`. */

/** Client commands that each make one decision round trip. */
const ROUND_TRIP_COMMANDS = ['eval', 'evalsha', 'eval_ro', 'evalsha_ro', 'fcall', 'fcall_ro', 'exec'];

/**
 * Reads the server's per-command call counts.
 * @param {InfoClient} client
 * @returns {Promise<CommandStats>}
 */
export async function readCommandStats(client) {
  return parseCommandStats(await client.info('commandstats'));
}

/**
 * Parses the text of `INFO commandstats`.
 * @param {string} text
 * @returns {CommandStats}
 */
export function parseCommandStats(text) {
  /** @type {Map<string, number>} */
  const stats = new Map();
  for (const match of text.matchAll(/^cmdstat_([^:]+):(.*)$/gm)) {
    const fields = new Map(
      (match[2] ?? '').split(',').map((pair) => /** @type {[string, string]} */ (pair.split('='))),
    );
    stats.set(
      /** @type {string} */ (match[1]),
      Number(fields.get('calls') ?? 0) + Number(fields.get('rejected_calls') ?? 0),
    );
  }
  return stats;
}

/**
 * Round trips between two readings (see the file comment for what counts as one).
 * @param {CommandStats} before
 * @param {CommandStats} after
 * @returns {number}
 */
export function roundTripsBetween(before, after) {
  let total = 0;
  for (const name of ROUND_TRIP_COMMANDS) total += (after.get(name) ?? 0) - (before.get(name) ?? 0);
  return total;
}

/**
 * Every command the server executed between two readings, the ones run inside scripts
 * included, minus the `INFO` that took the second reading.
 * @param {CommandStats} before
 * @param {CommandStats} after
 * @returns {number}
 */
export function commandsBetween(before, after) {
  let total = 0;
  for (const [name, calls] of after) total += calls - (before.get(name) ?? 0);
  return total - 1;
}

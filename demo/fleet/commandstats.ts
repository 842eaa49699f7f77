/*
 * Counting Redis round trips exactly, from the server's side: `INFO commandstats` before and
 * after a run. Commands a Lua script runs (GET, SET, PTTL, TIME…) are counted there too, so a
 * round trip is a call of a command a client sends to run a decision: a script call
 * (EVAL/EVALSHA and their _RO forms, FCALL) or a transaction's EXEC. A NOSCRIPT reply is a
 * round trip too (`calls` includes failed calls), and so is a rejected call.
 */

/** `calls + rejected_calls` per command name, as `INFO commandstats` reports them. */
export type CommandStats = ReadonlyMap<string, number>;

/** Client commands that each make one decision round trip. */
const ROUND_TRIP_COMMANDS = ['eval', 'evalsha', 'eval_ro', 'evalsha_ro', 'fcall', 'fcall_ro', 'exec'];

/** Anything with ioredis's `info(section)`. */
export interface InfoClient {
  info(section: string): Promise<string>;
}

/** Reads the server's per-command call counts. */
export async function readCommandStats(client: InfoClient): Promise<CommandStats> {
  return parseCommandStats(await client.info('commandstats'));
}

/** Parses the text of `INFO commandstats`. */
export function parseCommandStats(text: string): CommandStats {
  const stats = new Map<string, number>();
  for (const match of text.matchAll(/^cmdstat_([^:]+):(.*)$/gm)) {
    const fields = new Map((match[2] ?? '').split(',').map((pair) => pair.split('=') as [string, string]));
    stats.set(match[1] as string, Number(fields.get('calls') ?? 0) + Number(fields.get('rejected_calls') ?? 0));
  }
  return stats;
}

/** Round trips between two readings (see the file comment for what counts as one). */
export function roundTripsBetween(before: CommandStats, after: CommandStats): number {
  let total = 0;
  for (const name of ROUND_TRIP_COMMANDS) total += (after.get(name) ?? 0) - (before.get(name) ?? 0);
  return total;
}

/**
 * Every command the server executed between two readings, the ones run inside scripts
 * included, minus the `INFO` that took the second reading.
 */
export function commandsBetween(before: CommandStats, after: CommandStats): number {
  let total = 0;
  for (const [name, calls] of after) total += calls - (before.get(name) ?? 0);
  return total - 1;
}

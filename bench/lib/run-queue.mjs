/*
 * How long this process's main thread waited for a CPU while it was runnable: the second field of
 * Linux's /proc/self/schedstat (ns), read in µs. A server, or the load generator feeding it, that
 * waited long was starved by other processes, and then does less per wake-up: its CPU µs per
 * request measures the machine's load, not the code. Undefined where schedstat does not exist.
 */
import { readFileSync } from 'node:fs';

/** @returns {number | undefined} µs this process's main thread has waited on a run queue so far */
export function runQueueWaitUs() {
  try {
    return Number(readFileSync('/proc/self/schedstat', 'utf8').split(' ')[1]) / 1000;
  } catch {
    return undefined;
  }
}

/*
 * CPU time another process has used so far, all its threads: utime + stime of Linux's
 * /proc/<pid>/stat, in clock ticks of 10 ms (CLK_TCK 100 on Linux), read in µs. For the bench's
 * redis-server, whose cost per decision the Node server's own CPU figure does not hold (on a
 * busy machine it shows there only as waiting). Undefined where /proc does not exist.
 */
import { readFileSync } from 'node:fs';

const US_PER_TICK = 10_000;

/** @returns {number | undefined} µs of CPU `pid` has used so far */
export function processCpuUs(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name, which is in parentheses and may hold spaces: utime is the 12th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * US_PER_TICK;
  } catch {
    return undefined;
  }
}

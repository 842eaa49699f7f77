/*
 * CPU pinning for the http bench: the server under test on one CPU, the load generator (the bench
 * process, autocannon runs in it) and its redis-server on the other, so the server never shares a
 * core with its own load. Linux `taskset` (util-linux); without it, or with one CPU, nothing is
 * pinned and the bench says so. Chosen per framework: on this 2-core machine it narrowed Express's
 * round-to-round spread and did not narrow Fastify's (docs/http.md).
 */
import { execFileSync } from 'node:child_process';
import { availableParallelism } from 'node:os';

const TASKSET = 'taskset';
const SERVER_CPU = 1;
const LOAD_CPU = 0;

function unavailable() {
  if (availableParallelism() < 2) return 'one CPU';
  try {
    execFileSync(TASKSET, ['-c', String(SERVER_CPU), 'true'], { stdio: 'ignore' });
    return undefined;
  } catch {
    return 'no taskset';
  }
}

/** Sets the CPUs of every thread of process `pid`. */
const setCpus = (pid, cpus) => execFileSync(TASKSET, ['-a', '-p', '-c', cpus, String(pid)], { stdio: 'ignore' });

/**
 * Pinning for the frameworks in `wanted` (HTTP_BENCH_PIN: a comma list, or '0' for none).
 * `forFramework(framework, redisPid)` pins (or unpins) this process and redis-server for that
 * framework's runs and returns the options that fork a pinned server ({} when not pinned).
 * @param {string} wanted
 */
export function pinning(wanted) {
  const frameworks = wanted.split(',').filter((name) => name !== '0' && name !== '');
  const why = unavailable();
  const allCpus = `0-${availableParallelism() - 1}`;
  return {
    /** Which frameworks' servers are pinned, for the method line. */
    text:
      why !== undefined
        ? `not pinned (${why})`
        : frameworks.length === 0
          ? 'not pinned (HTTP_BENCH_PIN=0)'
          : `${frameworks.join(', ')}: server pinned to CPU ${SERVER_CPU}, autocannon and redis-server to CPU ${LOAD_CPU} (taskset); other frameworks not pinned`,
    /**
     * @param {string} framework
     * @param {number | undefined} redisPid
     * @returns {{ pinned: boolean, forkOptions: { execPath?: string, execArgv?: string[] } }}
     */
    forFramework(framework, redisPid) {
      const pinned = why === undefined && frameworks.includes(framework);
      if (why !== undefined) return { pinned, forkOptions: {} };
      const loadCpus = pinned ? String(LOAD_CPU) : allCpus;
      setCpus(process.pid, loadCpus);
      if (redisPid !== undefined) setCpus(redisPid, loadCpus);
      if (!pinned) return { pinned, forkOptions: {} };
      // fork runs `taskset -c 1 node <server>`: taskset execs node, so the IPC channel survives.
      const execArgv = ['-c', String(SERVER_CPU), process.execPath, ...process.execArgv];
      return { pinned, forkOptions: { execPath: TASKSET, execArgv } };
    },
  };
}

/*
 * Every process the fleet demo or a benchmark starts is tracked here, so none outlives this one:
 * on a normal exit, an error, or SIGINT/SIGTERM (the CLI turns those into an exit), whatever is
 * still running gets SIGKILL.
 */

/** @type {Set<import('node:child_process').ChildProcess>} */
const running = new Set();
let hooked = false;

/**
 * Registers `child` to be killed if it is still running when this process exits.
 * @param {import('node:child_process').ChildProcess} child
 * @returns {void}
 */
export function track(child) {
  if (!hooked) {
    hooked = true;
    process.once('exit', () => {
      for (const each of running) each.kill('SIGKILL');
    });
  }
  running.add(child);
  child.once('exit', () => running.delete(child));
}

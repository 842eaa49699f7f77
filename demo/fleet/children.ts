import type { ChildProcess } from 'node:child_process';

/*
 * Every process the fleet demo starts is tracked here, so none outlives this one: on a normal
 * exit, an error, or SIGINT/SIGTERM (the CLI turns those into an exit), whatever is still
 * running gets SIGKILL.
 */
const running = new Set<ChildProcess>();
let hooked = false;

/** Registers `child` to be killed if it is still running when this process exits. */
export function track(child: ChildProcess): void {
  if (!hooked) {
    hooked = true;
    process.once('exit', () => {
      for (const each of running) each.kill('SIGKILL');
    });
  }
  running.add(child);
  child.once('exit', () => running.delete(child));
}

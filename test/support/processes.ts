import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/**
 * Spawns `command` and resolves once its stdout shows `ready`; rejects with its output if it
 * exits first. The process is SIGKILLed when the test process exits, whatever happened.
 */
export async function spawnReady(command: string, args: readonly string[], ready: string): Promise<ChildProcess> {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  child.once('exit', () => running.delete(child));
  let output = '';
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes(ready)) resolve();
    });
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`${command} exited with ${code}: ${output}`)));
  });
  child.stdout?.removeAllListeners('data');
  child.stdout?.resume();
  child.stderr?.resume();
  return child;
}

/** SIGTERM (after SIGCONT, in case it was paused) and wait for the exit; no-op if already gone. */
export async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGCONT');
  child.kill('SIGTERM');
  await exited;
}

/** Polls `check` every `everyMs` until it returns a value other than `undefined`; throws after `timeoutMs`. */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined>,
  { timeoutMs = 20_000, everyMs = 50 } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`, { cause: last });
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

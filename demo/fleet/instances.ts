import { type ChildProcess, fork } from 'node:child_process';
import { once } from 'node:events';
import { track } from '../../bench/lib/children.mjs';
import type { InstanceConfig } from './instance.js';

/** Instance processes of one mode, each an HTTP server on its own loopback port. */
export interface RunningInstances {
  readonly ports: readonly number[];
  /** Each instance's `/metrics` port, when started with `metrics` (else empty). */
  readonly metricsPorts: readonly number[];
  readonly pids: readonly number[];
  /** Disconnects every instance (they close and exit), SIGKILL after 3 s; idempotent. */
  stop(): Promise<void>;
}

const START_TIMEOUT_MS = 20_000;

/** Forks `count` processes of `module` (the compiled instance entry) and waits for their ports. */
export async function startInstances(
  module: string | URL,
  count: number,
  config: InstanceConfig,
): Promise<RunningInstances> {
  const children: ChildProcess[] = [];
  const stop = () => Promise.all(children.map(stopChild)).then(() => undefined);
  try {
    for (let i = 0; i < count; i++) {
      const child = fork(module, [JSON.stringify(config)], {
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
        execArgv: [],
      });
      track(child);
      children.push(child);
    }
    const started = await Promise.all(children.map(portsOf));
    return {
      ports: started.map(({ port }) => port),
      metricsPorts: started.flatMap(({ metricsPort }) => (metricsPort === undefined ? [] : [metricsPort])),
      pids: children.map((child) => child.pid as number),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

interface Started {
  port: number;
  metricsPort?: number;
}

function portsOf(child: ChildProcess): Promise<Started> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => fail(new Error('instance did not start in time')), START_TIMEOUT_MS);
    const fail = (error: Error) => {
      clearTimeout(timer);
      reject(error);
    };
    child.once('message', (message: Partial<Started> & { error?: string }) => {
      clearTimeout(timer);
      if (typeof message.port === 'number') resolve({ port: message.port, metricsPort: message.metricsPort });
      else reject(new Error(`instance failed to start: ${message.error}`));
    });
    child.once('error', fail);
    child.once('exit', (code, signal) => fail(new Error(`instance exited before starting (${signal ?? code})`)));
  });
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  if (child.connected) child.disconnect();
  else child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
  await exited;
  clearTimeout(timer);
}

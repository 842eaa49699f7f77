/*
 * A throwaway redis-server (or valkey-server) process, shared by the fleet demo and the
 * benchmarks: found on PATH, started on a free loopback port without persistence, killed with
 * this process.
 */
import { execFileSync, spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { createServer } from 'node:net';
import { delimiter, join } from 'node:path';
import { track } from './children.mjs';

/**
 * A redis-server process this program started, on a loopback port, without persistence.
 * `version` is `redis-server --version`, e.g. `7.0.15`; `stop()` sends SIGTERM, then SIGKILL
 * after 2 s, and is idempotent.
 * @typedef {{ readonly url: string, readonly port: number, readonly pid: number, readonly version: string, stop(): Promise<void> }} OwnedRedisServer
 */

const SERVER_NAMES = ['redis-server', 'valkey-server'];

/**
 * The first redis-server (or valkey-server) executable on `pathEnv` (a PATH string), or undefined.
 * @param {string} [pathEnv]
 * @returns {string | undefined}
 */
export function locateRedisServer(pathEnv = process.env.PATH ?? '') {
  for (const dir of pathEnv.split(delimiter)) {
    if (dir === '') continue;
    for (const name of SERVER_NAMES) {
      const candidate = join(dir, name);
      try {
        accessSync(candidate, constants.X_OK);
        return candidate;
      } catch {}
    }
  }
  return undefined;
}

/** How to install redis-server, one platform a line. */
export const INSTALL_REDIS = [
  '  Debian/Ubuntu:  sudo apt-get install redis-server',
  '  Fedora/RHEL:    sudo dnf install redis',
  '  macOS:          brew install redis',
  '  Alpine:         apk add redis',
].join('\n');

/** What the fleet demo prints when no redis-server is available. */
export const INSTALL_HINT = [
  'redis-server was not found on PATH, so only the rows without Redis run.',
  'To see the shared Redis rows, install Redis and run again:',
  INSTALL_REDIS,
  'or point REDIS_URL at a server you run: REDIS_URL=redis://127.0.0.1:6379 npm start',
].join('\n');

/**
 * A loopback port nobody listens on right now (the OS picks it).
 * @returns {Promise<number>}
 */
async function freePort() {
  const server = createServer();
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve(undefined));
  });
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === 'string') throw new Error('the OS gave no port');
  return address.port;
}

/**
 * Starts `command` (a redis-server executable) on a free loopback port with `--save ''
 * --appendonly no`, retrying on another port if one was taken in between.
 * @param {string} command
 * @returns {Promise<OwnedRedisServer>}
 */
export async function startRedisServer(command) {
  const version = /v=(\S+)/.exec(execFileSync(command, ['--version'], { encoding: 'utf8' }))?.[1] ?? 'unknown';
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    try {
      const child = await launch(command, port);
      return {
        url: `redis://127.0.0.1:${port}`,
        port,
        pid: /** @type {number} */ (child.pid),
        version,
        stop: () => stop(child),
      };
    } catch (error) {
      if (attempt === 5) throw error;
    }
  }
}

/**
 * @param {string} command
 * @param {number} port
 * @returns {Promise<import('node:child_process').ChildProcess>}
 */
async function launch(command, port) {
  const child = spawn(
    command,
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    // Its own process group: a Ctrl-C in the terminal reaches this program, which stops it in order.
    { stdio: ['ignore', 'pipe', 'pipe'], detached: true },
  );
  track(child);
  let output = '';
  try {
    await new Promise((resolve, reject) => {
      child.stdout?.on('data', (/** @type {Buffer} */ chunk) => {
        output += chunk.toString();
        if (output.includes('Ready to accept connections')) resolve(undefined);
      });
      child.stderr?.on('data', (/** @type {Buffer} */ chunk) => {
        output += chunk.toString();
      });
      child.once('error', reject);
      child.once('exit', (code) => reject(new Error(`redis-server exited with code ${code}:\n${output}`)));
    });
  } catch (error) {
    await stop(child);
    throw error;
  }
  // Keep draining its log so a full pipe never blocks it.
  child.stdout?.removeAllListeners('data');
  child.stderr?.removeAllListeners('data');
  child.stdout?.resume();
  child.stderr?.resume();
  return child;
}

/**
 * @param {import('node:child_process').ChildProcess} child
 * @returns {Promise<void>}
 */
async function stop(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 2000);
  await exited;
  clearTimeout(timer);
}

import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { Redis } from 'ioredis';
import { afterAll, beforeAll } from 'vitest';

/** The executables of each server the tests can run; a sentinel is the server started with `--sentinel`. */
export const binaries = {
  redis: { server: 'redis-server', cli: 'redis-cli' },
  valkey: { server: 'valkey-server', cli: 'valkey-cli' },
} as const;

/** Which server a test starts: Redis (the default) or Valkey (8, from Debian bookworm-backports in CI). */
export type ServerKind = keyof typeof binaries;

/** A real redis-server (or valkey-server) on a free loopback port, owned by the test that started it. */
export interface RedisServer {
  readonly port: number;
  readonly url: string;
  /** A new ioredis connection to this server (closed by `stop`). */
  connect(): Redis;
  /** SIGSTOP / SIGCONT: the server hangs without closing connections. */
  pause(): void;
  resume(): void;
  /** SIGKILL, then start again on the same port with an empty dataset. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/** A port nobody listens on right now (the OS picks it). */
export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  server.close();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

async function launch(port: number, extraArgs: readonly string[], kind: ServerKind): Promise<ChildProcess> {
  const command = binaries[kind].server;
  const child = spawn(
    command,
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', ...extraArgs],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  running.add(child);
  child.once('exit', () => running.delete(child));
  let output = '';
  const ready = new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Ready to accept connections')) resolve();
    });
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`${command} exited with ${code}: ${output}`)));
  });
  await ready;
  child.stdout?.removeAllListeners('data');
  child.stdout?.resume();
  return child;
}

/** Starts redis-server (or `server`'s binary) on a free loopback port (never 6379 by assumption), without persistence. */
export async function startRedis(
  extraArgs: readonly string[] = [],
  { server = 'redis' }: { server?: ServerKind } = {},
): Promise<RedisServer> {
  let port = 0;
  let child: ChildProcess | undefined;
  for (let attempt = 0; child === undefined; attempt++) {
    port = await freePort();
    try {
      child = await launch(port, extraArgs, server);
    } catch (error) {
      if (attempt === 4) throw error;
    }
  }
  let current = child;
  const clients: Redis[] = [];
  const kill = async (signal: NodeJS.Signals) => {
    if (current.exitCode !== null || current.signalCode !== null) return;
    current.kill('SIGCONT');
    const exited = once(current, 'exit');
    current.kill(signal);
    await exited;
  };
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    connect() {
      const client = new Redis({ port, host: '127.0.0.1', lazyConnect: false, maxRetriesPerRequest: 1 });
      client.on('error', () => {});
      clients.push(client);
      return client;
    },
    pause: () => current.kill('SIGSTOP'),
    resume: () => current.kill('SIGCONT'),
    async restart() {
      await kill('SIGKILL');
      current = await launch(port, extraArgs, server);
    },
    async stop() {
      for (const client of clients) client.disconnect();
      await kill('SIGTERM');
    },
  };
}

/** What {@link useRedisServer} hands a test file: accessors valid in its tests and hooks. */
export interface RedisServerAccess {
  /** The running server (to pause, restart, or open more connections). */
  server(): RedisServer;
  /** Connection `index` (default 0) of those opened when the server started. */
  redis(index?: number): Redis;
}

/**
 * Registers vitest hooks that start one redis-server (or `server`'s) for the calling file or
 * `describe` block (`beforeAll`), open `connections` ioredis connections to it (default 1), and
 * stop it with them (`afterAll`). The accessors throw when called before the server has started,
 * such as while tests are registered.
 */
export function useRedisServer(options: { connections?: number; server?: ServerKind } = {}): RedisServerAccess {
  let started: { server: RedisServer; connections: Redis[] } | undefined;
  beforeAll(async () => {
    const server = await startRedis([], { server: options.server });
    started = { server, connections: Array.from({ length: options.connections ?? 1 }, () => server.connect()) };
  });
  afterAll(() => started?.server.stop());
  const current = () => {
    if (started === undefined) throw new Error('useRedisServer: the server starts in beforeAll; use it inside tests');
    return started;
  };
  return {
    server: () => current().server,
    redis(index = 0) {
      const connection = current().connections[index];
      if (connection === undefined) throw new Error(`useRedisServer: no connection ${index}; ask for more`);
      return connection;
    },
  };
}

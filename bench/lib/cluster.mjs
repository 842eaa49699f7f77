/*
 * The scale bench's throwaway 3-master Redis Cluster: `redis-server --cluster-enabled yes` on
 * free loopback ports (bus ports picked too, not port + 10000), joined by
 * `redis-cli --cluster create`. Killed with this process whatever happens.
 */
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';

const running = new Set();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

async function freePort() {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function startNode(command, dir) {
  const port = await freePort();
  const busPort = await freePort();
  const child = spawn(
    command,
    [
      ...['--port', String(port), '--cluster-port', String(busPort), '--bind', '127.0.0.1', '--dir', dir],
      ...['--save', '', '--appendonly', 'no', '--cluster-enabled', 'yes'],
      ...['--cluster-config-file', join(dir, `nodes-${port}.conf`)],
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  running.add(child);
  child.once('exit', () => running.delete(child));
  let output = '';
  await new Promise((resolve, reject) => {
    child.stdout.on('data', (chunk) => {
      output += chunk;
      if (output.includes('Ready to accept connections')) resolve(undefined);
    });
    child.once('exit', (code) => reject(new Error(`cluster node exited with ${code}: ${output}`)));
  });
  child.stdout.removeAllListeners('data');
  child.stdout.resume();
  return { port, child };
}

/**
 * Starts `masters` cluster nodes with `command` (a redis-server path; redis-cli is looked up
 * beside it, then on PATH) and resolves once every node reports cluster_state:ok.
 */
export async function startCluster(command, masters = 3) {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-bench-cluster-'));
  const nodes = [];
  const stop = async () => {
    await Promise.all(
      nodes.map(async ({ child }) => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        const exited = once(child, 'exit');
        child.kill('SIGTERM');
        await exited;
      }),
    );
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < masters; i++) nodes.push(await startNode(command, dir));
    const cli = await redisCli(command);
    const addresses = nodes.map(({ port }) => `127.0.0.1:${port}`);
    await promisify(execFile)(cli, ['--cluster', 'create', ...addresses, '--cluster-replicas', '0', '--cluster-yes']);
    for (const { port } of nodes) {
      for (let attempt = 0; ; attempt++) {
        const { stdout } = await promisify(execFile)(cli, ['-p', String(port), 'cluster', 'info']);
        if (stdout.includes('cluster_state:ok')) break;
        if (attempt === 200) throw new Error(`cluster node ${port} never reported cluster_state:ok`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
    return { ports: nodes.map(({ port }) => port), stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

async function redisCli(command) {
  const beside = join(dirname(command), 'redis-cli');
  try {
    await promisify(execFile)(beside, ['--version']);
    return beside;
  } catch {
    return 'redis-cli';
  }
}

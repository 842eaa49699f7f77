import type { ChildProcess } from 'node:child_process';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Cluster, type ClusterOptions, Redis } from 'ioredis';
import { Cluster as ValkeyCluster, type ClusterOptions as ValkeyClusterOptions } from 'iovalkey';
import { spawnReady, stopProcess, waitFor } from './processes.js';
import { binaries, freePort, type ServerKind } from './redis-server.js';

/** One server of a test cluster, with a plain (non-cluster) connection to it. */
export interface ClusterNode {
  readonly port: number;
  readonly id: string;
  /** A direct connection to this node only: CLUSTER, INFO, MIGRATE… */
  readonly admin: Redis;
}

/** A real Redis (or Valkey) Cluster on loopback ports, owned by the test file that started it. */
export interface TestCluster {
  readonly masters: readonly ClusterNode[];
  readonly replicas: readonly ClusterNode[];
  readonly startupNodes: readonly { host: string; port: number }[];
  /** A new ioredis `Cluster` client (disconnected by `stop`). */
  connect(options?: ClusterOptions): Cluster;
  /** The same with iovalkey (disconnected by `stop`). */
  connectValkey(options?: ValkeyClusterOptions): ValkeyCluster;
  /** The master serving `slot`, as `node` sees the cluster (default the first master). */
  ownerOf(slot: number, node?: ClusterNode): Promise<ClusterNode>;
  /**
   * Moves `slot` to master `to` the way `redis-cli --cluster reshard` does: IMPORTING /
   * MIGRATING, then MIGRATE key by key (awaiting `beforeEachKey` first, so a test can let
   * traffic run against a half-moved slot), then SETSLOT NODE everywhere. Resolves when
   * every master reports the new owner.
   */
  migrateSlot(slot: number, to: ClusterNode, beforeEachKey?: () => Promise<void>): Promise<void>;
  stop(): Promise<void>;
}

const run = promisify(execFile);

/**
 * Starts `masters` redis-server (or `server`'s) processes in cluster mode (plus
 * `replicasPerMaster` replicas each) on free loopback ports, joins them with `redis-cli --cluster
 * create` (or `valkey-cli`), and resolves once every node reports `cluster_state:ok`. Everything
 * started is stopped by `stop()`, by a failed start, and (SIGKILL) when the test process exits.
 */
export async function startCluster({
  masters = 3,
  replicasPerMaster = 0,
  server = 'redis',
}: {
  masters?: number;
  replicasPerMaster?: number;
  server?: ServerKind;
} = {}): Promise<TestCluster> {
  const dir = await mkdtemp(join(tmpdir(), 'sluice-cluster-'));
  const processes: ChildProcess[] = [];
  const connections: { disconnect(): void }[] = [];
  const stop = async () => {
    for (const connection of connections) connection.disconnect();
    await Promise.all(processes.map(stopProcess));
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const total = masters * (1 + replicasPerMaster);
    const ports: number[] = [];
    for (let i = 0; i < total; i++) {
      const { child, port } = await startNode(dir, server);
      processes.push(child);
      ports.push(port);
    }
    await run(binaries[server].cli, [
      '--cluster',
      'create',
      ...ports.map((port) => `127.0.0.1:${port}`),
      '--cluster-replicas',
      String(replicasPerMaster),
      '--cluster-yes',
    ]);
    const nodes = await Promise.all(
      ports.map(async (port) => {
        const admin = new Redis({ port, host: '127.0.0.1', maxRetriesPerRequest: 1 });
        admin.on('error', () => {});
        connections.push(admin);
        return { port, admin, id: String(await admin.call('CLUSTER', 'MYID')) };
      }),
    );
    await waitFor('every node ok and knowing every other', async () => {
      for (const node of nodes) {
        if (!(await node.admin.cluster('INFO')).includes('cluster_state:ok')) return undefined;
        const known = String(await node.admin.cluster('NODES'))
          .trim()
          .split('\n');
        if (known.length !== total || known.some((line) => !line.includes(' connected'))) return undefined;
      }
      return true;
    });
    const roles = await Promise.all(nodes.map(async (node) => ((await node.admin.role()) as [string])[0]));
    const masterNodes = nodes.filter((_, i) => roles[i] === 'master');
    const replicaNodes = nodes.filter((_, i) => roles[i] !== 'master');
    const startupNodes = masterNodes.map(({ port }) => ({ host: '127.0.0.1', port }));

    const ownerOf = async (slot: number, node: ClusterNode = masterNodes[0] as ClusterNode) => {
      const ranges = await node.admin.cluster('SLOTS');
      const range = ranges.find(([from, to]) => slot >= from && slot <= to);
      const owner = masterNodes.find((master) => master.id === range?.[2]?.[2]);
      if (!owner) throw new Error(`no owner for slot ${slot}`);
      return owner;
    };

    return {
      masters: masterNodes,
      replicas: replicaNodes,
      startupNodes,
      connect(options) {
        const client = new Cluster(startupNodes as { host: string; port: number }[], options);
        client.on('error', () => {});
        connections.push(client);
        return client;
      },
      connectValkey(options) {
        const client = new ValkeyCluster(startupNodes as { host: string; port: number }[], options);
        client.on('error', () => {});
        connections.push(client);
        return client;
      },
      ownerOf,
      async migrateSlot(slot, to, beforeEachKey) {
        const from = await ownerOf(slot);
        if (from.id === to.id) throw new Error(`slot ${slot} is already on ${to.port}`);
        await to.admin.call('CLUSTER', 'SETSLOT', slot, 'IMPORTING', from.id);
        await from.admin.call('CLUSTER', 'SETSLOT', slot, 'MIGRATING', to.id);
        for (;;) {
          const keys = (await from.admin.call('CLUSTER', 'GETKEYSINSLOT', slot, 1)) as string[];
          if (keys.length === 0) break;
          await beforeEachKey?.();
          await from.admin.call('MIGRATE', '127.0.0.1', to.port, '', 0, 5000, 'KEYS', ...keys);
        }
        for (const node of [to, from, ...masterNodes.filter((m) => m !== to && m !== from)]) {
          await node.admin.call('CLUSTER', 'SETSLOT', slot, 'NODE', to.id);
        }
        await waitFor(`slot ${slot} owned by ${to.port} everywhere`, async () => {
          for (const node of masterNodes) if ((await ownerOf(slot, node)).id !== to.id) return undefined;
          return true;
        });
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** One cluster-enabled server; the cluster bus gets its own free port (not port + 10000). */
async function startNode(dir: string, server: ServerKind): Promise<{ child: ChildProcess; port: number }> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const busPort = await freePort();
    try {
      const child = await spawnReady(
        binaries[server].server,
        [
          ...['--port', String(port), '--cluster-port', String(busPort), '--bind', '127.0.0.1'],
          ...['--save', '', '--appendonly', 'no', '--dir', dir],
          ...['--cluster-enabled', 'yes', '--cluster-config-file', join(dir, `nodes-${port}.conf`)],
          ...['--cluster-node-timeout', '5000'],
        ],
        'Ready to accept connections',
      );
      return { child, port };
    } catch (error) {
      if (attempt === 5) throw error;
    }
  }
}

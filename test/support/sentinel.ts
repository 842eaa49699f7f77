import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis, type RedisOptions } from 'ioredis';
import { Redis as Valkey, type RedisOptions as ValkeyOptions } from 'iovalkey';
import { spawnReady, stopProcess, waitFor } from './processes.js';
import { binaries, freePort, type ServerKind } from './redis-server.js';

/** A data server of the Sentinel set-up, with a direct connection to it. */
export interface DataNode {
  readonly port: number;
  readonly admin: Redis;
}

/** A master, its replica and three sentinels on loopback ports, owned by the test file that started them. */
export interface TestSentinel {
  /** The monitored master's name. */
  readonly name: string;
  readonly sentinels: readonly { host: string; port: number }[];
  /** Both data nodes, in start order (master first); their roles change with failovers. */
  readonly nodes: readonly DataNode[];
  /** The data node the sentinels call master now. */
  master(): Promise<DataNode>;
  /** A new ioredis client that finds the master through the sentinels (disconnected by `stop`). */
  connect(options?: RedisOptions): Redis;
  /** The same with iovalkey (disconnected by `stop`). */
  connectValkey(options?: ValkeyOptions): Valkey;
  /**
   * Forces a failover with `SENTINEL FAILOVER` once a sentinel sees a replica fit to promote;
   * resolves when the replica answers ROLE master and every sentinel names it.
   */
  failover(): Promise<{ from: DataNode; to: DataNode }>;
  /** Resolves when `node` is a replica again with its link to the master up (a sentinel reconfigures it, ≤ ~10 s). */
  demoted(node: DataNode): Promise<void>;
  stop(): Promise<void>;
}

const NAME = 'mymaster';

/**
 * Starts a master, one replica (`--replicaof`) and three sentinels (`redis-server <conf>
 * --sentinel`, quorum 2), all of `server`'s binary (default redis-server), with generated config
 * files in a temporary directory, and resolves once every sentinel sees the replica and the two
 * other sentinels. Everything started is stopped by `stop()`, by a failed start, and (SIGKILL)
 * when the test process exits.
 */
export async function startSentinel({ server = 'redis' }: { server?: ServerKind } = {}): Promise<TestSentinel> {
  const dir = await mkdtemp(join(tmpdir(), 'sluice-sentinel-'));
  const processes: ChildProcess[] = [];
  const connections: { disconnect(): void }[] = [];
  const stop = async () => {
    for (const connection of connections) connection.disconnect();
    await Promise.all(processes.map(stopProcess));
    await rm(dir, { recursive: true, force: true });
  };
  const admin = (port: number) => {
    const client = new Redis({ port, host: '127.0.0.1', maxRetriesPerRequest: 1 });
    client.on('error', () => {});
    connections.push(client);
    return client;
  };
  try {
    const start = async (args: (port: number) => string[] | Promise<string[]>, ready: string) => {
      for (let attempt = 1; ; attempt++) {
        const port = await freePort();
        try {
          processes.push(await spawnReady(binaries[server].server, await args(port), ready));
          return port;
        } catch (error) {
          if (attempt === 5) throw error;
        }
      }
    };
    const dataArgs = (port: number) => [
      ...['--port', String(port), '--bind', '127.0.0.1', '--dir', dir],
      ...['--save', '', '--appendonly', 'no'],
    ];
    const masterPort = await start(dataArgs, 'Ready to accept connections');
    const replicaPort = await start(
      (port) => [...dataArgs(port), '--replicaof', '127.0.0.1', String(masterPort)],
      'Ready to accept connections',
    );
    const nodes = [masterPort, replicaPort].map((port) => ({ port, admin: admin(port) }));
    await waitFor('the replica in sync', async () =>
      (await nodes[1]?.admin.info('replication'))?.includes('master_link_status:up') ? true : undefined,
    );

    const sentinelPorts: number[] = [];
    for (let i = 0; i < 3; i++) {
      sentinelPorts.push(
        await start(async (port) => {
          // Sentinel rewrites its config file as it learns the topology, so each gets its own.
          const file = join(dir, `sentinel-${port}.conf`);
          await writeFile(file, sentinelConfig(port, masterPort, dir));
          return [file, '--sentinel'];
        }, '+monitor master'),
      );
    }
    const sentinelAdmins = sentinelPorts.map(admin);
    const firstSentinel = sentinelAdmins[0] as Redis;
    await waitFor('every sentinel sees the replica and the other sentinels', async () => {
      for (const sentinel of sentinelAdmins) {
        const master = fields((await sentinel.call('SENTINEL', 'MASTER', NAME)) as string[]);
        if (master.get('num-slaves') !== '1' || master.get('num-other-sentinels') !== '2') return undefined;
      }
      return true;
    });

    const masterNode = async () => {
      const [, port] = (await firstSentinel.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', NAME)) as [string, string];
      const node = nodes.find((n) => n.port === Number(port));
      if (!node) throw new Error(`sentinel names an unknown master on ${port}`);
      return node;
    };
    const sentinels = sentinelPorts.map((port) => ({ host: '127.0.0.1', port }));

    return {
      name: NAME,
      sentinels,
      nodes,
      master: masterNode,
      connect(options) {
        const client = new Redis({ sentinels, name: NAME, ...options });
        client.on('error', () => {});
        connections.push(client);
        return client;
      },
      connectValkey(options) {
        const client = new Valkey({ sentinels, name: NAME, ...options });
        client.on('error', () => {});
        connections.push(client);
        return client;
      },
      async failover() {
        const from = await masterNode();
        const to = nodes.find((n) => n !== from) as DataNode;
        await waitFor('a replica fit to promote', async () => {
          const replicas = (await firstSentinel.call('SENTINEL', 'REPLICAS', NAME)) as string[][];
          return replicas.some((r) => fields(r).get('master-link-status') === 'ok') ? true : undefined;
        });
        await firstSentinel.call('SENTINEL', 'FAILOVER', NAME);
        await waitFor('the replica promoted and named by every sentinel', async () => {
          if (((await to.admin.role()) as [string])[0] !== 'master') return undefined;
          for (const sentinel of sentinelAdmins) {
            const [, port] = (await sentinel.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', NAME)) as [string, string];
            if (Number(port) !== to.port) return undefined;
          }
          return true;
        });
        return { from, to };
      },
      async demoted(node) {
        await waitFor(
          `${node.port} a replica again`,
          async () => {
            const replication = await node.admin.info('replication');
            return replication.includes('role:slave') && replication.includes('master_link_status:up')
              ? true
              : undefined;
          },
          { timeoutMs: 30_000 },
        );
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

function sentinelConfig(port: number, masterPort: number, dir: string): string {
  return [
    `port ${port}`,
    'bind 127.0.0.1',
    `dir ${dir}`,
    `sentinel monitor ${NAME} 127.0.0.1 ${masterPort} 2`,
    `sentinel down-after-milliseconds ${NAME} 2000`,
    `sentinel failover-timeout ${NAME} 10000`,
    '',
  ].join('\n');
}

/** SENTINEL replies are flat [field, value, field, value…] lists. */
function fields(flat: readonly string[]): Map<string, string> {
  const map = new Map<string, string>();
  for (let i = 0; i + 1 < flat.length; i += 2) map.set(flat[i] as string, flat[i + 1] as string);
  return map;
}

import type { ClusterNodes } from './cluster-send.js';
import type { ClientWrapper, ScriptClient } from './script.js';

/**
 * The per-master clients `batch.byNode` sends through: one per master, made once and wrapped
 * once by `wrap` (operation `'batch'`), so a wrapper such as `storeMetrics` sees each per-master
 * round trip with all of its keys. The per-node script declares only its first key (the others
 * are in ARGV, of other slots), so the client passes only that one to the server.
 */
export function perMasterClients(nodes: ClusterNodes, wrap: ClientWrapper | undefined): ClusterNodes {
  const clients = new Map<string, ScriptClient>();
  // The connection to a master can change (reconnect): each call goes through the latest one.
  const current = new Map<string, ScriptClient>();
  const clientOf = (master: string): ScriptClient => {
    const via = () => current.get(master) as ScriptClient;
    const firstKeyOnly: ScriptClient = {
      evalsha: (sha, keys, args) => via().evalsha(sha, keys.slice(0, 1), args),
      eval: (source, keys, args) => via().eval(source, keys.slice(0, 1), args),
    };
    return wrap ? wrap(firstKeyOnly, 'batch') : firstKeyOnly;
  };
  return {
    masterOf: (slot) => nodes.masterOf(slot),
    connectionTo(master) {
      const connection = nodes.connectionTo(master);
      if (connection === undefined) return undefined;
      current.set(master, connection);
      let client = clients.get(master);
      if (client === undefined) {
        client = clientOf(master);
        clients.set(master, client);
      }
      return client;
    },
  };
}

import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { clusterSuite } from './cluster-suite.js';
import { itDecidesRandomIdentifiersBySlot } from './slots.js';

// A 3-master valkey-server 8 cluster made by `valkey-cli --cluster create`.
const { cluster } = clusterSuite('valkey', 'Valkey 8 Cluster');

describe('Valkey 8 Cluster: slots', () => {
  it('is a cluster of 3 valkey-server 8 masters', async () => {
    for (const master of cluster().masters) {
      expect(await master.admin.info('server')).toMatch(/^valkey_version:8\./m);
      expect(await master.admin.cluster('INFO')).toMatch(/^cluster_size:3\r?$/m);
    }
  });

  // Through iovalkey's Cluster client, once it knows the slot map.
  itDecidesRandomIdentifiersBySlot(cluster, async () => {
    const client = cluster().connectValkey();
    if (client.status !== 'ready') await once(client, 'ready');
    return client;
  });
});

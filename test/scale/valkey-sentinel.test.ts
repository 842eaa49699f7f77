import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { sentinelSuite } from './sentinel-suite.js';

// A valkey-server 8 master and replica watched by three Valkey sentinels (`valkey-server --sentinel`).
const setup = sentinelSuite('valkey', 'Valkey 8 Sentinel');

describe('Valkey 8 Sentinel', () => {
  it('runs valkey-server 8 data nodes and sentinels', async () => {
    for (const { admin } of setup().nodes) expect(await admin.info('server')).toMatch(/^valkey_version:8\./m);
    for (const { host, port } of setup().sentinels) {
      const sentinel = new Redis({ host, port });
      const info = await sentinel.info('server');
      sentinel.disconnect();
      expect(info).toMatch(/^valkey_version:8\./m);
      expect(info).toMatch(/^server_mode:sentinel\r?$/m);
    }
  });
});

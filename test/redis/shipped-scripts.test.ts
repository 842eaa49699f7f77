import { describe, expect, it } from 'vitest';
import { defineScript } from '../../src/stores/redis/index.js';
import { useRedisServer } from '../support/redis-server.js';
import { shippedScripts } from './shipped.js';

const { redis } = useRedisServer();

describe('Shipped scripts on a real Redis', () => {
  it('Redis compiles each script and names it by the committed SHA-1', async () => {
    for (const [name, script] of Object.entries(shippedScripts)) {
      expect(await redis().script('LOAD', script.source), name).toBe(script.sha);
    }
  });

  it('defineScript names a script as Redis does, non-ASCII source included', async () => {
    const script = await defineScript("return 'µs −1'");
    expect(await redis().script('LOAD', script.source)).toBe(script.sha);
  });
});

import { describe, expect, it } from 'vitest';
import { buildErrors, bundleForWeb } from './bundle.js';

// The core, the memory store and the Hono adapter load on runtimes without Node's built-ins: their
// built entries bundle, dependencies included, for a platform that has none. tsup writes
// `node:crypto` as `crypto`, so the check resolves modules rather than searching for `node:`.
const entries = ['sluice', 'sluice/hono'];

describe('no Node built-in on the path of', () => {
  it.each(entries)('%s', async (entry) => {
    const errors = await bundleForWeb(`export * from '${entry}';`).then(() => [], buildErrors);
    expect(errors).toEqual([]);
  });
});

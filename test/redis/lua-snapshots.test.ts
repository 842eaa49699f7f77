import { readdir } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { SNAPSHOTS, shippedScripts } from './shipped.js';

/*
 * The Lua Redis runs is composed in TypeScript and committed as it is composed, one .lua file per
 * script, so a review shows the Lua that changed. After changing a script, `npm run lua:snapshots`
 * rewrites the snapshots; without it these tests fail.
 */

const folder = new URL(`${SNAPSHOTS}/`, import.meta.url);

describe('Lua snapshots', () => {
  for (const [name, script] of Object.entries(shippedScripts)) {
    it(`${name}.lua is the source Sluice sends`, async () => {
      await expect(script.source).toMatchFileSnapshot(`${SNAPSHOTS}/${name}.lua`);
    });
  }

  it('holds no snapshot of a script Sluice no longer sends', async () => {
    const files = (await readdir(folder)).filter((file) => file.endsWith('.lua'));
    expect(files.sort()).toEqual(
      Object.keys(shippedScripts)
        .map((name) => `${name}.lua`)
        .sort(),
    );
  });
});

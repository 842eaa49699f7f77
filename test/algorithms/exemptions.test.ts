import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { profiles } from '../../src/testing/profiles.js';

it("docs/algorithms.md's exemption table lists exactly the exemptions of src/testing/profiles.ts", () => {
  const doc = readFileSync(new URL('../../docs/algorithms.md', import.meta.url), 'utf8');
  const section = doc.slice(doc.indexOf('## Conformance exemptions'), doc.indexOf('## How it is proven'));
  const documented = [...section.matchAll(/^\| ([a-z ]+?) +\| `([a-z-]+)` +\|/gm)].map(
    ([, algorithm, property]) => `${algorithm?.replaceAll(' ', '-')} ${property}`,
  );
  const declared = profiles.flatMap((profile) =>
    Object.keys(profile.exempt).map((property) => `${profile.name} ${property}`),
  );
  expect(documented.sort()).toEqual(declared.sort());
});

import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ConfigError, InvalidCostError, InvalidKeyError, StoreUnavailableError } from '../../src/index.js';

const errorsDoc = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
const headings = new Set([...errorsDoc.matchAll(/^#{2,3} (\S+)$/gm)].map((match) => match[1]));
const source = (path: string) => readFileSync(new URL(`../../src/${path}`, import.meta.url), 'utf8');

describe('docs/errors.md', () => {
  it('every error message ends with its heading in docs/errors.md', () => {
    for (const error of [
      new ConfigError('x'),
      new InvalidKeyError('x'),
      new InvalidCostError('x'),
      new StoreUnavailableError('x'),
    ]) {
      expect(error.message).toBe(`x (see docs/errors.md#${error.code.toLowerCase()})`);
      expect(headings, error.code).toContain(error.code);
    }
  });

  it('has one heading per error code and per warning code in the source, and none other', () => {
    const codes = (text: string, pattern: RegExp) => new Set([...text.matchAll(pattern)].map((match) => match[1]));
    const errorCodes = codes(source('errors.ts'), /^ {2}\| '(ERR_SLUICE_[A-Z_]+)'/gm);
    const warningCodes = codes(source('warnings.ts'), /^ {2}\| '(SLUICE_[A-Z_]+)'/gm);
    expect(errorCodes.size).toBeGreaterThanOrEqual(5);
    expect(warningCodes.size).toBeGreaterThanOrEqual(7);
    const documented = [...headings].filter((heading) => /^(ERR_)?SLUICE_/.test(heading ?? ''));
    expect(documented.sort()).toEqual([...errorCodes, ...warningCodes].sort());
  });
});

describe('public TSDoc', () => {
  it('names no internal references (seeds, numbered rules, issues) in src/', () => {
    const files = readdirSync(new URL('../../src/', import.meta.url), { recursive: true, encoding: 'utf8' }).filter(
      (path) => path.endsWith('.ts') && !path.startsWith('fleet'),
    );
    const found = files.flatMap((path) =>
      source(path)
        .split('\n')
        .filter((line) => /^\s*(\/\*\*|\*)/.test(line) && /\b(seed \d{3}|rules? \d|issue #?\d)/i.test(line))
        .map((line) => `${path}: ${line.trim()}`),
    );
    expect(found).toEqual([]);
  });
});

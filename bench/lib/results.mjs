import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';

const dir = new URL('../results/', import.meta.url);

/**
 * Writes bench/results/<section>.json (committed, so figures can be compared across changes), with
 * the load averages at the end of the section: figures taken on a busy machine read slower.
 */
export function saveResults(section, data) {
  mkdirSync(dir, { recursive: true });
  const file = new URL(`${section}.json`, dir);
  writeFileSync(
    file,
    `${JSON.stringify({ section, date: new Date().toISOString(), loadAverage: loadavg(), ...data }, null, 2)}\n`,
  );
  return file.pathname;
}

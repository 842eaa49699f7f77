import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { commandsBetween, parseCommandStats, roundTripsBetween } from '../../bench/lib/commandstats.mjs';
import { locateRedisServer } from '../../bench/lib/redis-process.mjs';
import { formatInteger, formatTable } from '../../bench/lib/table.mjs';

const before = parseCommandStats(
  [
    '# Commandstats',
    'cmdstat_info:calls=3,usec=90,usec_per_call=30.00,rejected_calls=0,failed_calls=0',
    'cmdstat_evalsha:calls=10,usec=100,usec_per_call=10.00,rejected_calls=0,failed_calls=1',
    'cmdstat_get:calls=10,usec=10,usec_per_call=1.00,rejected_calls=0,failed_calls=0',
  ].join('\r\n'),
);
const after = parseCommandStats(
  [
    '# Commandstats',
    'cmdstat_info:calls=4,usec=120,usec_per_call=30.00,rejected_calls=0,failed_calls=0',
    'cmdstat_evalsha:calls=17,usec=170,usec_per_call=10.00,rejected_calls=1,failed_calls=2',
    'cmdstat_eval:calls=1,usec=50,usec_per_call=50.00,rejected_calls=0,failed_calls=0',
    'cmdstat_exec:calls=2,usec=4,usec_per_call=2.00,rejected_calls=0,failed_calls=0',
    'cmdstat_get:calls=19,usec=19,usec_per_call=1.00,rejected_calls=0,failed_calls=0',
    'cmdstat_script|load:calls=1,usec=9,usec_per_call=9.00,rejected_calls=0,failed_calls=0',
  ].join('\r\n'),
);

describe('round trips from INFO commandstats', () => {
  it('counts script calls (failed and rejected ones too) and EXEC, not the commands scripts run', () => {
    // evalsha 7 calls + 1 rejected, eval 1, exec 2
    expect(roundTripsBetween(before, after)).toBe(11);
  });

  it('counts every executed command apart from the INFO that read the second snapshot', () => {
    // info 1 (the first reading), evalsha 8, eval 1, exec 2, get 9, script|load 1, minus 1
    expect(commandsBetween(before, after)).toBe(21);
  });
});

describe('formatTable', () => {
  it('pads cells and aligns numbers right, as a Markdown table', () => {
    const table = formatTable(
      [{ header: 'mode' }, { header: 'admitted', align: 'right' }],
      [
        ['memory', formatInteger(300)],
        ['redis', formatInteger(1000)],
      ],
    );
    expect(table.split('\n')).toEqual([
      '| mode   | admitted |',
      '|--------|---------:|',
      '| memory |      300 |',
      '| redis  |    1,000 |',
    ]);
  });
});

describe('locateRedisServer', () => {
  it('finds an executable redis-server on PATH and nothing on an empty PATH', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-path-'));
    try {
      const server = join(dir, 'redis-server');
      writeFileSync(server, '#!/bin/sh\n');
      expect(locateRedisServer(['/nonexistent', dir].join(delimiter))).toBeUndefined();
      chmodSync(server, 0o755);
      expect(locateRedisServer(['/nonexistent', dir].join(delimiter))).toBe(server);
      expect(locateRedisServer('')).toBeUndefined();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Compiled, compile } from '../fleet/compile.js';

let compiled: Compiled;
beforeAll(async () => {
  compiled = await compile({ example: 'examples/outbound-throttle.ts' });
});
afterAll(() => compiled?.remove());

it('examples/outbound-throttle.ts calls its fake upstream through throttle and every call is answered', async () => {
  const child = spawn(process.execPath, [compiled.path('example')], {
    env: { ...process.env, CALLS: '15' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let stdout = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  const [code] = await once(child, 'close');
  expect(code).toBe(0);
  const [, calls, served, refused] = /calls: (\d+), served: (\d+), 429s: (\d+)/.exec(stdout) ?? [];
  expect(Number(calls)).toBe(15);
  expect(Number(served) + Number(refused)).toBe(15);
  expect(stdout).toMatch(/most in any rolling second: \d+/);
});

import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RedisServer, startRedis } from '../support/redis-server.js';
import { type Compiled, compile } from './compile.js';

let compiled: Compiled;
let server: RedisServer;
const children: ChildProcess[] = [];

beforeAll(async () => {
  [compiled, server] = await Promise.all([compile({ 'minimal-server': 'examples/minimal-server.ts' }), startRedis()]);
});
afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  compiled?.remove();
  await server?.stop();
});

/** Starts the example on a free port; resolves with its port once it listens. */
async function startExample(env: NodeJS.ProcessEnv): Promise<number> {
  const child = spawn(process.execPath, [compiled.path('minimal-server')], {
    env: { ...process.env, PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  let output = '';
  while (!/listening on http:\/\/127\.0\.0\.1:(\d+)/.test(output)) {
    const [chunk] = (await once(child.stdout as NodeJS.ReadableStream, 'data')) as [Buffer];
    output += chunk.toString();
  }
  return Number(/:(\d+)\n/.exec(output)?.[1]);
}

async function statuses(ports: readonly number[], requests: number): Promise<number[]> {
  const seen: number[] = [];
  for (let i = 0; i < requests; i++) {
    seen.push((await fetch(`http://127.0.0.1:${ports[i % ports.length]}/`)).status);
  }
  return seen;
}

describe('examples/minimal-server.ts', () => {
  it('admits 10 per minute per client on the memory store, then answers 429 with Retry-After', async () => {
    const port = await startExample({ REDIS_URL: '' });
    expect(await statuses([port], 10)).toEqual(Array(10).fill(200));
    const denied = await fetch(`http://127.0.0.1:${port}/`);
    expect(denied.status).toBe(429);
    expect(denied.headers.get('retry-after')).toBe('6');
    expect(denied.headers.get('ratelimit-remaining')).toBe('0');
  });

  it('with REDIS_URL, two processes share one limit of 10', async () => {
    const ports = await Promise.all([startExample({ REDIS_URL: server.url }), startExample({ REDIS_URL: server.url })]);
    const seen = await statuses(ports, 30);
    expect(seen.filter((status) => status === 200)).toHaveLength(10);
    expect(seen.filter((status) => status === 429)).toHaveLength(20);
  });
});

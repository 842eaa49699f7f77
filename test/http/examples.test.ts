import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Compiled, compile } from '../fleet/compile.js';
import { send } from './support/client.js';

const examples = ['http-node', 'http-express', 'http-fastify', 'http-hono', 'http-koa'] as const;
const children: ChildProcess[] = [];
let compiled: Compiled;

beforeAll(async () => {
  const all = [...examples, 'http-express-api', 'http-llm-reservations'];
  compiled = await compile(Object.fromEntries(all.map((name) => [name, `examples/${name}.ts`])));
});
afterAll(() => {
  for (const child of children) child.kill('SIGKILL');
  compiled?.remove();
});

async function start(name: string): Promise<string> {
  const child = spawn(process.execPath, [compiled.path(name)], {
    env: { ...process.env, PORT: '0', REDIS_URL: '' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  let output = '';
  while (!/listening on (http:\/\/127\.0\.0\.1:\d+)/.test(output)) {
    const [chunk] = (await once(child.stdout as NodeJS.ReadableStream, 'data')) as [Buffer];
    output += chunk.toString();
  }
  return /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1] as string;
}

describe.each(examples)('examples/%s.ts', (name) => {
  it('nested limits, a report costing 5 of the key budget, a login limit: real process, real requests', async () => {
    const url = await start(name);
    const key = { 'x-api-key': 'k1' };
    for (let i = 0; i < 10; i++) expect((await send(`${url}/`, { headers: key })).status).toBe(200);
    const denied = await send(`${url}/`, { headers: key });
    expect(denied.status).toBe(429);
    const wait = Number(denied.headers.get('retry-after'));
    expect(wait).toBeGreaterThanOrEqual(1);
    expect(wait).toBeLessThanOrEqual(6); // 10 per minute: one unit every 6 s
    // 10 admitted; the denied 11th charged neither limit, so per-ip shows 50, not 49.
    expect(denied.headers.get('ratelimit')).toMatch(/^"per-ip";r=50;t=\d+, "per-key";r=0;t=\d+$/);

    const report = await send(`${url}/report`, { headers: { 'x-api-key': 'k2' } });
    expect(report.status).toBe(200);
    expect(report.headers.get('ratelimit')).toMatch(/"per-key";r=5;/);

    const logins = [];
    for (let i = 0; i < 6; i++) logins.push((await send(`${url}/login`, { method: 'POST' })).status);
    expect(logins).toEqual([200, 200, 200, 200, 200, 429]);
  });
});

describe('examples/http-express-api.ts', () => {
  it('keyless requests skip per-key; failed logins count, 5 per 15 min; a success clears them; report costs 5', async () => {
    const url = await start('http-express-api');
    const bare = await send(`${url}/`);
    expect(bare.headers.get('ratelimit')).toMatch(/^"per-ip";r=59;t=\d+$/);
    expect((await send(`${url}/report`, { headers: { 'x-api-key': 'k1' } })).headers.get('ratelimit')).toMatch(
      /"per-key";r=5;/,
    );

    const login = (username: string, password: string) =>
      send(`${url}/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username, password }),
      });
    const failures = [];
    for (let i = 0; i < 4; i++) failures.push((await login('ann', 'guess')).status);
    expect(failures).toEqual([401, 401, 401, 401]);
    expect((await login('ann', 'correct horse')).status).toBe(200); // clears ann's failures
    const again = [];
    for (let i = 0; i < 6; i++) again.push((await login('ann', 'guess')).status);
    expect(again).toEqual([401, 401, 401, 401, 401, 429]);
    expect((await login('bob', 'guess')).status).toBe(401);
  });
});

describe('examples/http-llm-reservations.ts', () => {
  it('reserves 1,000 tokens per completion and settles 640 from the handler: 360 go back each time', async () => {
    const url = await start('http-llm-reservations');
    const post = () => send(`${url}/v1/completions`, { method: 'POST', headers: { 'x-api-key': 'k1' } });
    const first = await post();
    expect(first.status).toBe(200);
    expect(JSON.parse(first.body)).toMatchObject({ usage: { totalTokens: 640 } });
    expect(first.headers.get('ratelimit')).toMatch(/^"tokens";r=9000;/);
    // 10,000 − 640 settled − 1,000 reserved now = 8,360, plus a token per 6 ms refilled in between
    // (real time); without the refund it would be 8,000 plus the refill.
    const remaining = Number(/^"tokens";r=(\d+);/.exec((await post()).headers.get('ratelimit') ?? '')?.[1]);
    expect(remaining).toBeGreaterThanOrEqual(8360);
    expect(remaining).toBeLessThan(8360 + 300);
    const keyless = await send(`${url}/v1/completions`, { method: 'POST' }); // the client IP's budget
    expect(keyless.headers.get('ratelimit')).toMatch(/^"tokens";r=9000;/);
  });
});

import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Compiled, compile } from '../fleet/compile.js';
import { type RedisServer, startRedis } from '../support/redis-server.js';
import { postJson, send } from './support/client.js';

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

async function start(name: string, env: Record<string, string> = {}): Promise<string> {
  const child = spawn(process.execPath, [compiled.path(name)], {
    env: { ...process.env, PORT: '0', REDIS_URL: '', ...env },
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
    expect(bare.headers.get('ratelimit')).toMatch(/^"per-ip";r=1999;t=\d+$/);
    expect((await send(`${url}/report`, { headers: { 'x-api-key': 'k1' } })).headers.get('ratelimit')).toMatch(
      /"per-key";r=95;/, // the free plan's 100, less the report's 5
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

    // A username that is not a string neither throws (500) nor escapes: it counts against the address.
    const hostile = await send(`${url}/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: { toString: 1 }, password: 'guess' }),
    });
    expect(hostile.status).toBe(401);
  });
});

/**
 * The plan and admin story through real HTTP: `userUrl` serves the user, `adminUrl` (the same
 * process, or another instance of the fleet) takes the admin calls. Leasing may leave up to
 * `stranded` units unused (docs/leasing.md, "Under-admission"), never admit more.
 */
async function plansAndAdmin(userUrl: string, adminUrl: string, stranded: number) {
  const user = { 'x-api-key': 'user-1' };
  const get = () => send(`${userUrl}/`, { headers: user });
  const admin = (path: string, body: unknown, token = 'admin-secret') =>
    postJson(`${adminUrl}/admin/keys/user-1/${path}`, body, { authorization: `Bearer ${token}` });
  /** Requests until one answers `status` (an instance hears another's change within a round trip). */
  const until = async (status: number) => {
    for (let tries = 1; tries <= 50; tries++) {
      const reply = await get();
      if (reply.status === status) return reply;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    throw new Error(`never answered ${status}`);
  };

  const started = Date.now();
  const first = await get();
  expect(first.headers.get('ratelimit-policy')).toMatch(/"per-key";q=100;w=60/);
  expect(first.headers.get('ratelimit')).toMatch(/"per-key";r=99;/);
  let admitted = 1;
  let denied = await get();
  for (; denied.status === 200 && admitted < 1_000; denied = await get()) admitted++;
  // 100 at once, plus the one unit per 600 ms that the free plan refills while the loop runs.
  expect(admitted).toBeGreaterThanOrEqual(100 - stranded);
  expect(admitted).toBeLessThanOrEqual(100 + Math.ceil((Date.now() - started) / 600));
  expect(denied.status).toBe(429);
  expect(denied.headers.get('ratelimit-policy')).toMatch(/"per-key";q=100;w=60/);

  expect((await admin('reset', {}, 'wrong')).status).toBe(403);
  expect((await send(`${adminUrl}/admin/keys/user-1/reset`, { method: 'POST' })).status).toBe(403);
  // A refused admin call changed nothing (a reset would show 99; the plan refills one unit per 600 ms).
  expect((await get()).headers.get('ratelimit')).toMatch(/"per-key";r=0;/);

  const upgrade = await send(`${adminUrl}/admin/keys/user-1/plan`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json', authorization: 'Bearer admin-secret' },
    body: JSON.stringify({ plan: 'pro' }),
  });
  expect(upgrade.status).toBe(204);
  const pro = await until(200); // the upgrade reset the key: the whole pro burst at once
  expect(pro.headers.get('ratelimit-policy')).toMatch(/"per-key";q=1000;w=60/);
  expect(pro.headers.get('ratelimit')).toMatch(/"per-key";r=9\d\d;/);

  expect((await admin('block', { durationMs: 'soon' })).status).toBe(400);
  expect((await admin('block', { durationMs: 2_000 })).status).toBe(204);
  const blocked = await until(429);
  const retryAfter = Number(blocked.headers.get('retry-after'));
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(2);
  await new Promise((resolve) => setTimeout(resolve, retryAfter * 1_000));
  expect((await until(200)).status).toBe(200); // the block ended by itself

  expect((await admin('block', { durationMs: 60_000 })).status).toBe(204);
  expect(Number((await until(429)).headers.get('retry-after'))).toBeGreaterThan(55);
  expect((await admin('reset', {})).status).toBe(204);
  const fresh = await until(200); // reset ends the block and forgets the spent units
  expect(fresh.headers.get('ratelimit')).toMatch(/"per-key";r=999;/);
}

describe('examples/http-express-api.ts: plans and admin', () => {
  let redis: RedisServer;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(() => {
    for (const child of children) child.kill('SIGKILL'); // before their Redis goes away
    return redis?.stop();
  });

  it('memory: free denied at 101 (q=100); upgrade → q=1000; block 2 s → 429 then 200; reset → 200', async () => {
    const url = await start('http-express-api', { ADMIN_TOKEN: 'admin-secret' });
    await plansAndAdmin(url, url, 0);
  });

  it('two instances on Redis, leased by 10: admin calls on one instance reach the other', async () => {
    const env = { ADMIN_TOKEN: 'admin-secret', REDIS_URL: redis.url, LEASE_SIZE: '10' };
    const [serving, admin] = await Promise.all([start('http-express-api', env), start('http-express-api', env)]);
    await plansAndAdmin(serving, admin, 9);
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

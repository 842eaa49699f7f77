/*
 * An Express 5 API with the limits every real API needs (sluice/express):
 *   - per client IP, on every request;
 *   - per API key with plans, only for requests that carry one (a keyless request is not charged
 *     under its IP): free 100/min, pro 1,000/min, the plan read from a lookup (a Map standing in
 *     for a database) on each request;
 *   - a login limit per username and client IP that counts failed attempts only (5 per 15 min)
 *     and is cleared by a successful login;
 *   - an expensive report that costs 5 units of the key's budget;
 *   - admin endpoints (bearer ADMIN_TOKEN) that reset, block and change the plan of an API key.
 *
 *   npm run build && node --experimental-strip-types examples/http-express-api.ts   (Node ≥ 22.6; or compile it)
 *   ADMIN_TOKEN=secret REDIS_URL=redis://127.0.0.1:6379 LEASE_SIZE=10 ...        shared Redis, leased
 *
 * On a plan change the admin endpoint tells every instance (`reset` and `invalidate` both do, on
 * Redis through the `subscriber` connection), so leased instances drop the units they hold under
 * the old plan. An upgrade also resets the key: GCRA keeps the time a key owes, and 100 free
 * units owe 60 s, which is the whole pro burst, so without the reset the upgraded key would wait
 * and then get one request per 60 ms until the minute is over (docs/algorithms.md, "Parameters
 * that change on a live key"). A downgrade only invalidates: what was spent stays spent.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { createLeasedLimiter, createMemoryLimiter, gcra, type Limiter } from 'sluice';
import { rateLimit } from 'sluice/express';
import { storageKeyOf } from 'sluice/http';

const plans = {
  free: { limit: 100, periodMs: 60_000 },
  pro: { limit: 1_000, periodMs: 60_000 },
} as const;
type Plan = keyof typeof plans;

const redis = process.env.REDIS_URL
  ? await Promise.all([import('ioredis'), import('sluice/redis')]).then(([{ Redis }, { createRedisLimiter }]) => ({
      client: new Redis(process.env.REDIS_URL as string),
      createRedisLimiter,
    }))
  : undefined;

/**
 * Stands in for the users table (API key → plan; unknown keys are free): a Map, or a Redis hash
 * when the instances share Redis, so a plan changed on one instance is read by all of them.
 */
const planTable = new Map<string, Plan>();
async function planOf(apiKey: string): Promise<Plan> {
  const plan = redis ? await redis.client.hget('example:plans', apiKey) : planTable.get(apiKey);
  return plan === 'pro' ? 'pro' : 'free';
}
async function setPlan(apiKey: string, plan: Plan): Promise<void> {
  if (redis) await redis.client.hset('example:plans', apiKey, plan);
  else planTable.set(apiKey, plan);
}

function limiter(limit: number, periodMs: number, name: string): Limiter {
  const algorithm = gcra({ limit, periodMs });
  if (!redis) return createMemoryLimiter({ algorithm });
  // The subscriber hears the other instances' resets, blocks and invalidations (leasing needs it).
  const { client, createRedisLimiter } = redis;
  return createRedisLimiter({ client, subscriber: client.duplicate(), algorithm, prefix: `example:${name}:` });
}

const leaseSize = Number(process.env.LEASE_SIZE ?? 0);
const planLimiter = limiter(plans.free.limit, plans.free.periodMs, 'per-key');
const perKey = leaseSize > 0 ? createLeasedLimiter({ remote: planLimiter, leaseSize }) : planLimiter;

const app = express();
app.use(
  rateLimit<express.Request>({
    limits: [
      { name: 'per-ip', limiter: limiter(2_000, 60_000, 'per-ip') },
      {
        name: 'per-key',
        limiter: perKey,
        key: (r) => r.header('x-api-key') ?? null,
        params: async (r) => plans[await planOf(r.header('x-api-key') ?? '')],
      },
    ],
    routes: { 'GET /report': { cost: { 'per-key': 5 } } },
    trustProxy: process.env.TRUST_PROXY || false,
  }),
);

app.post(
  '/login',
  express.json(),
  rateLimit<express.Request>({
    limits: {
      name: 'login',
      limiter: limiter(5, 15 * 60_000, 'login'),
      // Anything but a string username (attacker-shaped JSON, no body) counts against the address.
      key: (r) => {
        const username: unknown = r.request.body?.username;
        return typeof username === 'string' ? `${username}@${r.ipKey}` : r.ipKey;
      },
      countWhen: (status) => status >= 400,
      resetWhen: (status) => status < 400,
    },
    failure: 'closed',
  }),
  (request, response) => {
    const ok = request.body?.password === 'correct horse';
    response
      .status(ok ? 200 : 401)
      .type('text/plain')
      .send(ok ? 'welcome\n' : 'wrong password\n');
  },
);
app.get('/report', (_request, response) => {
  response.type('text/plain').send('an expensive report\n');
});
app.get('/', (_request, response) => {
  response.type('text/plain').send('hello\n');
});

/** Compares digests, so neither the token's length nor its bytes leak through timing. */
function isAdmin(request: express.Request): boolean {
  const token = process.env.ADMIN_TOKEN;
  if (!token) return false;
  const digest = (value: string) => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(request.header('authorization') ?? ''), digest(`Bearer ${token}`));
}

const admin = express.Router();
admin.use(express.json(), (request, response, next) => {
  if (isAdmin(request)) next();
  else response.status(403).type('text/plain').send('forbidden\n');
});
admin.post('/keys/:apiKey/reset', async (request, response) => {
  await perKey.reset(await storageKeyOf('per-key', request.params.apiKey as string));
  response.status(204).end();
});
admin.post('/keys/:apiKey/block', async (request, response) => {
  const durationMs = Number(request.body?.durationMs);
  if (!Number.isInteger(durationMs) || durationMs <= 0) {
    response.status(400).type('text/plain').send('durationMs: a positive integer\n');
    return;
  }
  await perKey.block?.(await storageKeyOf('per-key', request.params.apiKey as string), durationMs);
  response.status(204).end();
});
admin.put('/keys/:apiKey/plan', async (request, response) => {
  const apiKey = request.params.apiKey as string;
  const plan: unknown = request.body?.plan;
  if (plan !== 'free' && plan !== 'pro') {
    response.status(400).type('text/plain').send('plan: "free" or "pro"\n');
    return;
  }
  const upgrade = plans[plan].limit > plans[await planOf(apiKey)].limit;
  await setPlan(apiKey, plan);
  const key = await storageKeyOf('per-key', apiKey);
  await (upgrade ? perKey.reset(key) : perKey.invalidate?.(key));
  response.status(204).end();
});
app.use('/admin', admin);

const server = app.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${(server.address() as AddressInfo).port}`);
});

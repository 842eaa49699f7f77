/*
 * An Express 5 API with the limits every real API needs (sluice/express):
 *   - per client IP, on every request;
 *   - per API key, only for requests that carry one (a keyless request is not charged under its IP);
 *   - a login limit per username and client IP that counts failed attempts only (5 per 15 min)
 *     and is cleared by a successful login;
 *   - an expensive report that costs 5 units of the key's budget.
 *
 *   npm run build && node --experimental-strip-types examples/http-express-api.ts   (Node ≥ 22.6; or compile it)
 */
import type { AddressInfo } from 'node:net';
import express from 'express';
import { createMemoryLimiter, gcra } from 'sluice';
import { rateLimit } from 'sluice/express';

const perMinute = (limit: number) => createMemoryLimiter({ algorithm: gcra({ limit, periodMs: 60_000 }) });
const failedLogins = createMemoryLimiter({ algorithm: gcra({ limit: 5, periodMs: 15 * 60_000 }) });

const app = express();
app.use(
  rateLimit({
    limits: [
      { name: 'per-ip', limiter: perMinute(60) },
      { name: 'per-key', limiter: perMinute(10), key: (r) => r.header('x-api-key') ?? null },
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
      limiter: failedLogins,
      key: (r) => `${String(r.request.body?.username)}@${r.ipKey}`,
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

const server = app.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${(server.address() as AddressInfo).port}`);
});

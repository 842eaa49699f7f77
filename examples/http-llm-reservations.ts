/*
 * An LLM proxy with Express: each completion reserves an estimate of 1,000 tokens of the API
 * key's budget (10,000 tokens a minute) before the model runs, and settles the real usage after
 * it (640 here: 360 go back). At most 2 completions per key run at once.
 *
 *   npm run build && node --experimental-strip-types examples/http-llm-reservations.ts   (Node ≥ 22.6; or compile it)
 *   curl -XPOST -H 'x-api-key: k1' localhost:3000/v1/completions   (twice: RateLimit r=9000, then r=8360)
 */
import type { AddressInfo } from 'node:net';
import express from 'express';
import { createMemoryLimiter, gcra } from 'sluice';
import { createConcurrencyLimiter } from 'sluice/concurrency';
import { rateLimit } from 'sluice/express';
import { settleReservation } from 'sluice/http';

// Per API key; a request without one is limited by its client IP.
const apiKey = (request: { header(name: string): string | undefined }) => request.header('x-api-key');

const app = express();
app.use(
  rateLimit({
    limits: {
      name: 'tokens',
      limiter: createMemoryLimiter({ algorithm: gcra({ limit: 10_000, periodMs: 60_000 }) }),
      key: apiKey,
      cost: 1000, // the estimate, charged before the model runs
    },
    reservations: ['tokens'], // settled by the handler with the real usage
    inFlight: { name: 'completions', limiter: createConcurrencyLimiter({ limit: 2, holdMs: 120_000 }), key: apiKey },
  }),
);

/** Stands in for the model: answers with its token usage. */
async function complete(): Promise<{ text: string; usage: { totalTokens: number } }> {
  return { text: 'Hello!', usage: { totalTokens: 640 } };
}

app.post('/v1/completions', async (request, response) => {
  const completion = await complete();
  await settleReservation(request, 'tokens', completion.usage.totalTokens); // 1,000 reserved, 640 used
  response.json(completion);
});

const server = app.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${(server.address() as AddressInfo).port}`);
});

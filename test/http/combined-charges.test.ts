import { type ClientRequest, request as httpRequest } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { createConcurrencyLimiter, memoryHolds } from '../../src/concurrency/index.js';
import { createHttpLimiter, type RequestFacts, settleReservation, type Verdict } from '../../src/http/index.js';
import { createMemoryLimiter, gcra } from '../../src/index.js';
import { send } from './support/client.js';
import { type Harness, harnesses } from './support/harnesses.js';

// Features that are exact alone, combined on one limit: every give-back and every debt of a
// charge goes under the request's own numbers, and no unit comes back twice.

const frozen = () => 1_000_000;
const node = harnesses[0] as Harness;
const perMinute = (limit: number) =>
  createMemoryLimiter({ algorithm: gcra({ limit, periodMs: 60_000 }), clock: frozen, pruneIntervalMs: 0 });
const plan = (limit: number) => ({ limit, periodMs: 60_000 });
const facts = (request: object, headers: Record<string, string> = {}): RequestFacts<object> => ({
  request,
  method: 'GET',
  path: '/',
  header: (name) => headers[name],
  remoteAddress: '127.0.0.1',
});
const IP_KEY = (name: string) => `${name}:ip:127.0.0.1`;

async function until(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (await check()) return;
    await sleep(10);
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('reservations + per-request params', () => {
  const options = (limiter: ReturnType<typeof perMinute>, planLimit: number) => ({
    limits: { name: 'tokens', limiter, cost: 1000, params: () => plan(planLimit) },
    reservations: ['tokens'],
  });

  it('base 1,000/min, plan 100,000/min, settle 0 every 10th of 600 calls: at most 100,000 tokens served', async () => {
    const limiter = perMinute(1000);
    const http = createHttpLimiter<object>(options(limiter, 100_000));
    let served = 0;
    for (let call = 1; call <= 600; call++) {
      const request = {};
      if ((await http.check(facts(request))).action !== 'continue') continue;
      if (call % 10 === 0) await settleReservation(request, 'tokens', 0);
      else served += 1000;
    }
    expect(served).toBeLessThanOrEqual(100_000);
    expect(served).toBeGreaterThanOrEqual(90_000);
  });

  it('a plan slower than the base (10,000/min under 100,000/min) charges debt under the plan: 1,000 over the estimate is 1,000 of the plan', async () => {
    const limiter = perMinute(100_000);
    const http = createHttpLimiter<object>(options(limiter, 10_000));
    const request = {};
    expect((await http.check(facts(request))).action).toBe('continue');
    await settleReservation(request, 'tokens', 2000);
    expect((await limiter.peek(IP_KEY('tokens'), { params: plan(10_000) })).remaining).toBe(8000);
  });

  it('through real HTTP (node:http): 600 calls, every 10th settled at 0, at most 100,000 tokens served', async () => {
    const limiter = perMinute(1000);
    const seen: object[] = [];
    const server = await node.start({
      limits: {
        name: 'tokens',
        limiter,
        cost: 1000,
        key: (info) => {
          seen.push(info.request as object);
          return undefined;
        },
        params: (info) => (info.header('x-plan') === 'pro' ? plan(100_000) : undefined),
      },
      reservations: ['tokens'],
    });
    try {
      let served = 0;
      for (let call = 1; call <= 600; call++) {
        const reply = await send(`${server.url}/hello`, { headers: { 'x-plan': 'pro' } });
        if (reply.status !== 200) continue;
        if (call % 10 === 0) await settleReservation(seen.at(-1) as object, 'tokens', 0);
        else served += 1000;
      }
      expect(served).toBeLessThanOrEqual(100_000);
    } finally {
      await server.close();
    }
  });
});

describe('in-flight cap + per-request params', () => {
  function setup() {
    const rate = perMinute(10);
    const slots = createConcurrencyLimiter({ limit: 1, holdMs: 60_000, store: memoryHolds() });
    return { rate, slots, limits: { name: 'rate', limiter: rate, params: () => plan(100) } };
  }

  it('base 10/min, plan 100/min, cap 1: 50 requests, 20 cap refusals while the slot is held, then 150: at most 100 admitted', async () => {
    const { rate, slots, limits } = setup();
    const http = createHttpLimiter<object>({ limits, inFlight: { name: 'slots', limiter: slots } });
    let admitted = 0;
    type Admitted = Extract<Verdict, { action: 'continue' }>;
    const pass = async (): Promise<Admitted | undefined> => {
      const verdict = await http.check(facts({}));
      if (verdict.action !== 'continue') return undefined;
      admitted++;
      return verdict;
    };
    for (let i = 0; i < 50; i++) await (await pass())?.settle?.(200);
    const holding = await pass();
    const before = (await rate.peek(IP_KEY('rate'), { params: plan(100) })).remaining;
    for (let i = 0; i < 20; i++) expect(await pass()).toBeUndefined();
    // Each refusal gave back exactly the one unit it took, under the plan.
    expect((await rate.peek(IP_KEY('rate'), { params: plan(100) })).remaining).toBe(before);
    await holding?.settle?.(200);
    for (let i = 0; i < 150; i++) await (await pass())?.settle?.(200);
    expect(admitted).toBe(100);
  });

  it('through real HTTP (node:http): the same schedule admits at most 100', async () => {
    const { slots, limits } = setup();
    const server = await node.start({ limits, inFlight: { name: 'slots', limiter: slots } });
    let open: ClientRequest | undefined;
    try {
      for (let i = 0; i < 50; i++) expect((await send(`${server.url}/hello`)).status).toBe(200);
      await until(async () => (await slots.held(IP_KEY('slots'))) === 0, 'the 50 releases');
      open = httpRequest(`${server.url}/hello`, { headers: { 'x-outcome': 'hang' }, agent: false });
      open.on('error', () => {}); // the destroy below
      open.end();
      await until(async () => (await slots.held(IP_KEY('slots'))) === 1, 'the held slot');
      for (let i = 0; i < 20; i++) expect((await send(`${server.url}/hello`)).status).toBe(429);
      open.destroy();
      await until(async () => (await slots.held(IP_KEY('slots'))) === 0, 'the release on hang-up');
      for (let i = 0; i < 150; i++) {
        await send(`${server.url}/hello`);
        await until(async () => (await slots.held(IP_KEY('slots'))) === 0, 'the release');
      }
      expect(server.hits.get('/hello')).toBe(100);
    } finally {
      open?.destroy();
      await server.close();
    }
  });
});

describe('reservations + countWhen on one limit', () => {
  const options = (limiter: ReturnType<typeof perMinute>) => ({
    limits: { name: 'tokens', limiter, cost: 1000, countWhen: (status: number) => status < 500 },
    reservations: ['tokens'],
  });

  it('countWhen s < 500, every other call settles 0 and answers 502: each unit given back once, at most 10,000 served', async () => {
    const limiter = perMinute(10_000);
    const http = createHttpLimiter<object>(options(limiter));
    let served = 0;
    for (let call = 1; call <= 200; call++) {
      const request = {};
      const verdict = await http.check(facts(request));
      if (verdict.action !== 'continue') continue;
      if (call % 2 === 0) {
        served += 1000;
        await verdict.settle?.(200);
        continue;
      }
      const before = (await limiter.peek(IP_KEY('tokens'))).remaining;
      await settleReservation(request, 'tokens', 0);
      await verdict.settle?.(502);
      // The 1,000 units came back once: by the settle; the uncounted response found none standing.
      expect((await limiter.peek(IP_KEY('tokens'))).remaining).toBe(before + 1000);
    }
    expect(served).toBeLessThanOrEqual(10_000);
  });

  it('an uncounted response first, a late settle after: the late settle gives nothing back again', async () => {
    const limiter = perMinute(10_000);
    const http = createHttpLimiter<object>(options(limiter));
    const request = {};
    const other = {};
    await http.check(facts(other)); // another request's 1,000 units, which must stay spent
    const verdict = await http.check(facts(request));
    if (verdict.action !== 'continue') throw new Error('denied');
    await verdict.settle?.(502);
    expect((await limiter.peek(IP_KEY('tokens'))).remaining).toBe(9000);
    await settleReservation(request, 'tokens', 0);
    await settleReservation(request, 'tokens', 0);
    expect((await limiter.peek(IP_KEY('tokens'))).remaining).toBe(9000);
  });

  it('through real HTTP (node:http): 502 answers settled at 0 give each unit back once', async () => {
    const limiter = perMinute(10_000);
    const seen: object[] = [];
    const server = await node.start({
      ...options(limiter),
      limits: {
        ...options(limiter).limits,
        key: (info) => {
          seen.push(info.request as object);
          return undefined;
        },
      },
    });
    try {
      let served = 0;
      for (let call = 1; call <= 200; call++) {
        const failing = call % 2 === 1;
        const reply = await send(`${server.url}/hello`, { headers: failing ? { 'x-outcome': '502' } : {} });
        if (reply.status === 429) continue;
        if (!failing) served += 1000;
        // Settled after the response: before or after the uncounted response's give-back.
        else await settleReservation(seen.at(-1) as object, 'tokens', 0);
      }
      expect(served).toBeLessThanOrEqual(10_000);
    } finally {
      await server.close();
    }
  });
});

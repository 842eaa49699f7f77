import { type ChildProcess, fork } from 'node:child_process';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createConcurrencyLimiter, redisHolds } from '../../src/concurrency/index.js';
import { type Compiled, compile } from '../fleet/compile.js';
import { useRedisServer } from '../support/redis-server.js';

const LIMIT = 5;
const HOLD_MS = 1000;
const HEARTBEAT_MS = 200;
const POLL_MS = 10;
const KEY = 'reports:customer-42';
const REDIS_KEY = `sluice:holds:{${KEY}}`;

// The store's own count: holds whose expiry is after the server's now, as every script sees them.
const LIVE_HOLDS = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
return {now, redis.call('ZCOUNT', KEYS[1], '(' .. now, '+inf')}
`;

const redis = useRedisServer({ connections: 2 });
let compiled: Compiled;
const children: ChildProcess[] = [];

beforeAll(async () => {
  compiled = await compile({ holder: 'test/concurrency/support/holder.ts' });
});
afterAll(() => {
  for (const child of children) child.kill('SIGKILL');
  compiled?.remove();
});

async function forkHolder(count: number): Promise<{ child: ChildProcess; ids: string[] }> {
  const args = [redis.server().port, KEY, LIMIT, count, HOLD_MS, HEARTBEAT_MS].map(String);
  const child = fork(compiled.path('holder'), args, { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  children.push(child);
  const [message] = (await Promise.race([
    once(child, 'message'),
    once(child, 'exit').then(() => {
      throw new Error('holder exited before holding');
    }),
  ])) as [{ ids: string[] }];
  return { child, ids: message.ids };
}

describe('a SIGKILLed holder on a real redis-server', { timeout: 60_000 }, () => {
  it('frees its slots within holdMs + one round trip; never more than limit held at once', async () => {
    const admin = redis.redis(1);
    // Forked one after another, so each one's acquires are granted under the limit of 5.
    const holders = [await forkHolder(2), await forkHolder(2), await forkHolder(1)];
    const limiter = createConcurrencyLimiter({
      limit: LIMIT,
      holdMs: HOLD_MS,
      store: redisHolds({ client: redis.redis(0) }),
    });
    expect(await limiter.held(KEY)).toBe(LIMIT);
    expect((await limiter.acquire(KEY)).allowed).toBe(false);

    // The store's state, sampled throughout, from its own clock.
    let monitoring = true;
    const live: number[] = [];
    const monitor = (async () => {
      while (monitoring) {
        const [, count] = (await admin.eval(LIVE_HOLDS, 1, REDIS_KEY)) as [number, number];
        live.push(count);
        await sleep(2);
      }
    })();
    await sleep(3 * HEARTBEAT_MS); // the holders renew while alive: nothing expires

    const killed = holders[0] as (typeof holders)[0];
    const [killedAtMs] = (await admin.eval(LIVE_HOLDS, 1, REDIS_KEY)) as [number, number];
    killed.child.kill('SIGKILL');
    await once(killed.child, 'exit');
    const killedExpiries = (await admin.zmscore(REDIS_KEY, ...killed.ids)).map(Number);

    // Poll like a client waiting for a slot, until the killed holder's two slots are ours.
    // The longest wait between two acquires sent: a poll's sleep plus its round trip.
    let slowestPollMs = 0;
    let lastSentAt = performance.now();
    let denials = 0;
    const grantedAtMs: number[] = [];
    while (grantedAtMs.length < killed.ids.length) {
      const sentAt = performance.now();
      slowestPollMs = Math.max(slowestPollMs, sentAt - lastSentAt);
      lastSentAt = sentAt;
      const acquired = await limiter.acquire(KEY);
      if (acquired.allowed) {
        grantedAtMs.push(Number(await admin.zscore(REDIS_KEY, acquired.hold.id)) - HOLD_MS);
      } else {
        denials++;
        await sleep(POLL_MS);
      }
    }
    // The survivors still hold theirs: the key is full again, and stays so.
    expect((await limiter.acquire(KEY)).allowed).toBe(false);
    await sleep(2 * HEARTBEAT_MS);
    monitoring = false;
    await monitor;

    // Killed holds expire at most holdMs after their last renewal, which came before the kill.
    const lastExpiryMs = Math.max(...killedExpiries);
    expect(lastExpiryMs).toBeLessThanOrEqual(killedAtMs + HOLD_MS);
    // No slot was granted before a killed hold expired…
    expect(Math.min(...grantedAtMs)).toBeGreaterThanOrEqual(Math.min(...killedExpiries));
    // …and both were granted by the first acquire sent after the last expiry (a poll's sleep
    // and round trip later at most).
    expect(Math.max(...grantedAtMs)).toBeLessThanOrEqual(lastExpiryMs + Math.ceil(slowestPollMs));
    expect(denials).toBeGreaterThan(0);
    // Never more than the limit, in any sample of the store's state.
    expect(live.length).toBeGreaterThan(50);
    expect(Math.max(...live)).toBe(LIMIT);
    expect(await limiter.held(KEY)).toBe(LIMIT);
    await limiter.close();
  });
});

import { Redis } from 'ioredis';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { gcra } from '../../src/index.js';
import { createRedisLimiter } from '../../src/stores/redis/index.js';
import type { SluiceWarning } from '../../src/warnings.js';
import { type RedisServer, type ServerKind, startRedis } from '../support/redis-server.js';

let server: RedisServer | undefined;
const clients: Redis[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) client.disconnect();
  await server?.stop();
  server = undefined;
});

/** A connection without ioredis's ready check, whose own INFO would blur the count of INFO calls. */
function connect(running: RedisServer): Redis {
  const client = new Redis({ port: running.port, host: '127.0.0.1', enableReadyCheck: false });
  clients.push(client);
  return client;
}

async function start(args: readonly string[], kind: ServerKind = 'redis'): Promise<RedisServer> {
  server = await startRedis(args, { server: kind });
  return server;
}

/** INFO calls others made on the server: each read of the count is itself an INFO call, counted in the next read. */
function infoCounter(admin: Redis): () => Promise<number> {
  let own = 0;
  return async () => {
    const calls = Number(/cmdstat_info:calls=(\d+)/.exec(await admin.info('commandstats'))?.[1] ?? 0);
    return calls - own++;
  };
}

/** Runs `decisions` decisions on `limiters` and returns once the policy read has been answered. */
async function decide(running: RedisServer, limiters: { limit(key: string): Promise<unknown> }[], decisions: number) {
  const infoCalls = infoCounter(connect(running));
  for (let i = 0; i < decisions; i++) for (const limiter of limiters) await limiter.limit(`k${i % 3}`);
  await vi.waitFor(async () => expect(await infoCalls()).toBeGreaterThan(0));
  // One more round trip on the limiters' connection: the read's reply came before it.
  for (const limiter of limiters) await limiter.limit('last');
  return { infoCalls: await infoCalls() };
}

function limiterOn(client: unknown, warnings: SluiceWarning[] | false, prefix = 'e:') {
  return createRedisLimiter({
    client,
    algorithm: gcra({ limit: 5, periodMs: 3_600_000 }),
    prefix,
    onWarning: warnings === false ? false : (warning) => warnings.push(warning),
  });
}

describe('Redis limiter: a maxmemory-policy that evicts its keys warns once', () => {
  for (const [kind, policy] of [
    ['redis', 'allkeys-lru'],
    ['redis', 'volatile-lru'],
    ['valkey', 'allkeys-lru'],
    ['valkey', 'volatile-ttl'],
  ] as const) {
    it(`${kind} with ${policy}: one SLUICE_REDIS_EVICTION warning naming noeviction, over 10 decisions`, async () => {
      const running = await start(['--maxmemory', '64mb', '--maxmemory-policy', policy], kind);
      const warnings: SluiceWarning[] = [];
      await decide(running, [limiterOn(connect(running), warnings)], 10);
      expect(warnings).toHaveLength(1);
      expect(warnings[0]?.code).toBe('SLUICE_REDIS_EVICTION');
      expect(warnings[0]?.message).toContain(`'${policy}'`);
      expect(warnings[0]?.message).toContain('noeviction');
      expect(warnings[0]?.message).toMatch(/\(see docs\/errors\.md#sluice_redis_eviction\)$/);
    });
  }

  it('noeviction: no warning', async () => {
    const running = await start(['--maxmemory', '64mb', '--maxmemory-policy', 'noeviction']);
    const warnings: SluiceWarning[] = [];
    const { infoCalls } = await decide(running, [limiterOn(connect(running), warnings)], 3);
    expect(infoCalls).toBe(1);
    expect(warnings).toEqual([]);
  });

  it('one INFO read per client, shared by its limiters, off the decision path; each limiter warns its own sink', async () => {
    const running = await start(['--maxmemory-policy', 'allkeys-lfu']);
    const client = connect(running);
    const first: SluiceWarning[] = [];
    const second: SluiceWarning[] = [];
    const limiters = [limiterOn(client, first, 'a:'), limiterOn(client, second, 'b:')];
    const { infoCalls } = await decide(running, limiters, 20);
    expect(infoCalls).toBe(1);
    expect([first.length, second.length]).toEqual([1, 1]);
  });

  it('onWarning: false skips the read', async () => {
    const running = await start(['--maxmemory-policy', 'allkeys-lru']);
    const limiter = limiterOn(connect(running), false);
    for (let i = 0; i < 5; i++) await limiter.limit('k');
    expect(await infoCounter(connect(running))()).toBe(0);
  });

  it('a server that refuses INFO: decisions are unaffected and nothing is warned', async () => {
    const running = await start(['--maxmemory-policy', 'allkeys-lru', '--rename-command', 'INFO', '']);
    const warnings: SluiceWarning[] = [];
    const limiter = limiterOn(connect(running), warnings);
    const admitted = [];
    for (let i = 0; i < 7; i++) admitted.push((await limiter.limit('k')).allowed);
    expect(admitted).toEqual([true, true, true, true, true, false, false]);
    expect(warnings).toEqual([]);
  });
});

/*
 * A forked holder for the crash test: takes `count` of `key`'s `limit` holds on the Redis at `port`,
 * renewing them every `heartbeatMs`, reports their ids to the parent, then lives until killed.
 * argv: port key limit count holdMs heartbeatMs
 */
import { Redis } from 'ioredis';
import { createConcurrencyLimiter, redisHolds } from '../../../src/concurrency/index.js';

const [port, key, limit, count, holdMs, heartbeatMs] = process.argv.slice(2);
const client = new Redis({ port: Number(port), host: '127.0.0.1' });
const limiter = createConcurrencyLimiter({
  limit: Number(limit),
  holdMs: Number(holdMs),
  heartbeatMs: Number(heartbeatMs),
  store: redisHolds({ client }),
});

const ids: string[] = [];
for (let i = 0; i < Number(count); i++) {
  const acquired = await limiter.acquire(key as string);
  if (!acquired.allowed) throw new Error('holder: not granted');
  ids.push(acquired.hold.id);
}
process.send?.({ ids });
// Heartbeat timers are unref'd: this one keeps the process alive until it is killed.
setInterval(() => {}, 60_000);

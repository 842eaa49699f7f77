/*
 * One process of the outbound fleet test: pushes `calls` calls through `throttle` to the fake
 * upstream, `concurrency` waiting at a time, on a Redis limiter shared with its siblings.
 * Started with child_process.fork; told its config in argv, starts on 'go', reports over IPC.
 */
import { Agent, request } from 'node:http';
import { Redis } from 'ioredis';
import { fixedWindow, gcra, slidingWindowLog } from 'sluice';
import { createAcquirer, createRedisPauseStore, throttle } from 'sluice/outbound';
import { createRedisLimiter } from 'sluice/redis';

export interface CallerConfig {
  redisPort: number;
  upstreamUrl: string;
  prefix: string;
  calls: number;
  concurrency: number;
  algorithm: 'gcra' | 'sliding-window-log' | 'fixed-window';
  limit: number;
  periodMs: number;
  burst?: number;
  pace: boolean;
  maxLatenessMs?: number;
}

export interface CallerReport {
  statuses: Record<string, number>;
}

const config = JSON.parse(process.argv[2] as string) as CallerConfig;
const algorithm =
  config.algorithm === 'gcra'
    ? gcra({ limit: config.limit, periodMs: config.periodMs, burst: config.burst })
    : config.algorithm === 'fixed-window'
      ? fixedWindow({ limit: config.limit, windowMs: config.periodMs })
      : slidingWindowLog({ limit: config.limit, windowMs: config.periodMs });
const client = new Redis({ port: config.redisPort, host: '127.0.0.1' });
const limiter = createRedisLimiter({ client, algorithm, prefix: config.prefix });
const acquirer = createAcquirer(limiter, {
  pace: config.pace,
  maxLatenessMs: config.maxLatenessMs,
  pauses: createRedisPauseStore({ client, prefix: `${config.prefix}pause:` }),
});
const agent = new Agent({ keepAlive: true });

/** One GET; the send time (epoch ms, shared by every process) goes in `x-sent-at`. */
function get(url: string): Promise<{ status: number; headers: Record<string, string | string[] | undefined> }> {
  return new Promise((resolve, reject) => {
    const sentAt = String(performance.timeOrigin + performance.now());
    request(url, { agent, headers: { 'x-sent-at': sentAt } }, (res) => {
      res.resume();
      res.once('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers }));
    })
      .once('error', reject)
      .end();
  });
}

const call = throttle(get, {
  limiter: acquirer,
  key: 'partner-api',
  response: (res) => res,
});

async function run(): Promise<CallerReport> {
  const statuses: Record<string, number> = {};
  let next = 0;
  const worker = async () => {
    while (next < config.calls) {
      next++;
      const res = await call(config.upstreamUrl);
      statuses[res.status] = (statuses[res.status] ?? 0) + 1;
    }
  };
  await Promise.all(Array.from({ length: config.concurrency }, worker));
  return { statuses };
}

// Scripts cached and the HTTP client's connections open before the parent starts counting.
await limiter.peek('warm-up');
await acquirer.acquire('warm-up');
await createRedisPauseStore({ client, prefix: `${config.prefix}pause:` }).pause('warm-up', 1);
await Promise.all(Array.from({ length: 4 }, () => get(new URL('/warm', config.upstreamUrl).href)));
process.send?.('ready');
process.once('message', async () => {
  const report = await run();
  process.send?.(report, () => {
    acquirer.close();
    agent.destroy();
    client.disconnect();
    process.exit(0);
  });
});

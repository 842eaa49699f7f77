/*
 * One server process of the http bench: HTTP_FRAMEWORK (fastify | express) with HTTP_LIMITER
 * (none | sluice | peer) on HTTP_STORE (memory | redis | batch | leased | fixed: Redis plain with the
 * fixed-window algorithm, the peers' own; the peers have memory and redis) at HTTP_LIMIT requests per hour, on a free loopback port sent to the parent over
 * IPC. With HTTP_PROXY=1 the framework and both limiters trust the loopback proxy, so each
 * request's client is its X-Forwarded-For address (the 10k-key runs vary it). On 'start' it
 * begins a reading, on 'stop' it replies with the CPU time (process.cpuUsage, µs), the wall time
 * and the main thread's run-queue wait (µs; undefined without /proc/self/schedstat), the requests
 * seen and the heap bytes allocated in between (see allocationReading).
 */
import { createServer } from 'node:http';
import { GCProfiler, getHeapStatistics } from 'node:v8';
import { envOf } from './environment.mjs';
import { serverWithPrototypes } from './express-prototypes.mjs';
import { runQueueWaitUs } from './run-queue.mjs';

const framework = envOf('HTTP_FRAMEWORK');
const variant = envOf('HTTP_LIMITER');
const store = envOf('HTTP_STORE');
const limit = Number(envOf('HTTP_LIMIT'));
const behindProxy = process.env.HTTP_PROXY === '1';
const HOUR_MS = 3_600_000;
const PROXY = '127.0.0.1';
const LEASE_SIZE = 100;
// Fresh keys per server process, so the admission pre-check never meets an earlier run's state.
const prefix = `bench-http-${process.pid}:`;

async function redisClient() {
  const { Redis } = await import('ioredis');
  return new Redis(envOf('BENCH_REDIS_URL'), { maxRetriesPerRequest: 1, connectTimeout: 1000 });
}

async function sluiceLimiter() {
  const { createLeasedLimiter, createMemoryLimiter, fixedWindow, gcra } = await import('sluice');
  const algorithm = store === 'fixed' ? fixedWindow({ limit, windowMs: HOUR_MS }) : gcra({ limit, periodMs: HOUR_MS });
  if (store === 'memory') return createMemoryLimiter({ algorithm });
  const { createRedisLimiter } = await import('sluice/redis');
  const remote = createRedisLimiter({ client: await redisClient(), algorithm, prefix, batch: store === 'batch' });
  return store === 'leased'
    ? createLeasedLimiter({ remote, leaseSize: Math.min(LEASE_SIZE, limit), onWarning: false })
    : remote;
}

const sluiceOptions = async () => ({
  limiter: await sluiceLimiter(),
  ...(behindProxy ? { trustProxy: PROXY } : {}),
});

async function fastifyServer() {
  const { default: Fastify } = await import('fastify');
  const app = Fastify({ logger: false, ...(behindProxy ? { trustProxy: PROXY } : {}) });
  if (variant === 'sluice') {
    const { rateLimit } = await import('sluice/fastify');
    await app.register(rateLimit, await sluiceOptions());
  } else if (variant === 'peer') {
    const { default: peer } = await import('@fastify/rate-limit');
    const redis = store === 'redis' ? { redis: await redisClient(), nameSpace: prefix } : {};
    await app.register(peer, { max: limit, timeWindow: HOUR_MS, ...redis });
  }
  app.get('/', async () => 'ok');
  await app.listen({ host: '127.0.0.1', port: 0 });
  return app.server;
}

async function expressServer() {
  const { default: express } = await import('express');
  const app = express();
  if (behindProxy) app.set('trust proxy', PROXY);
  if (variant === 'sluice') {
    const { rateLimit } = await import('sluice/express');
    app.use(rateLimit(await sluiceOptions()));
  } else if (variant === 'peer') {
    const { rateLimit } = await import('express-rate-limit');
    let redis = {};
    if (store === 'redis') {
      const { RedisStore } = await import('rate-limit-redis');
      const client = await redisClient();
      const sendCommand = (command, ...args) =>
        /** @type {Promise<import('rate-limit-redis').RedisReply>} */ (client.call(command, ...args));
      redis = { store: new RedisStore({ sendCommand, prefix }) };
    }
    app.use(rateLimit({ limit, windowMs: HOUR_MS, standardHeaders: 'draft-7', legacyHeaders: false, ...redis }));
  }
  app.get('/', (_req, res) => {
    res.send('ok');
  });
  // See express-prototypes.mjs: 'stock' keeps Express's per-request prototype change.
  const server = process.env.HTTP_BENCH_EXPRESS === 'stock' ? createServer(app) : serverWithPrototypes(app);
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return server;
}

/**
 * Heap bytes allocated between start() and stop(): the growth of the used heap plus what every
 * garbage collection in between freed (V8's GCProfiler reports the used heap before and after
 * each). It counts JavaScript heap objects of the whole process (framework, limiter, Redis
 * client), not buffers outside the heap; the limiter's share is the difference from "none".
 */
function allocationReading() {
  let profiler;
  let usedAtStart = 0;
  return {
    start() {
      profiler = new GCProfiler();
      profiler.start();
      usedAtStart = getHeapStatistics().used_heap_size;
    },
    stop() {
      const usedNow = getHeapStatistics().used_heap_size;
      const { statistics } = profiler.stop();
      let freed = 0;
      for (const gc of statistics) {
        freed += gc.beforeGC.heapStatistics.usedHeapSize - gc.afterGC.heapStatistics.usedHeapSize;
      }
      return { bytes: usedNow - usedAtStart + freed, collections: statistics.length };
    },
  };
}

const server = framework === 'fastify' ? await fastifyServer() : await expressServer();
let requests = 0;
server.on('request', () => {
  requests++;
});
const allocations = allocationReading();
let started;
process.on('message', (message) => {
  if (message === 'start') {
    allocations.start();
    started = { cpu: process.cpuUsage(), requests, atMs: performance.now(), waitUs: runQueueWaitUs() };
    process.send?.('started');
  } else if (message === 'stop') {
    const heap = allocations.stop();
    const cpu = process.cpuUsage(started.cpu);
    const wallUs = (performance.now() - started.atMs) * 1000;
    const waitUs = started.waitUs === undefined ? undefined : (runQueueWaitUs() ?? 0) - started.waitUs;
    process.send?.({ cpuUs: cpu.user + cpu.system, wallUs, waitUs, requests: requests - started.requests, heap });
  }
});
process.send?.({ port: /** @type {import('node:net').AddressInfo} */ (server.address()).port });

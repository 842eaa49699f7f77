/*
 * The bench's own throwaway redis-server on a free loopback port (never a server from
 * REDIS_URL: the bench flushes its data). Variant processes get its URL in BENCH_REDIS_URL.
 */
import { INSTALL_REDIS, locateRedisServer, startRedisServer } from './redis-process.mjs';

/**
 * Runs `fn(server)` with a fresh redis-server, stopping it afterwards (and on Ctrl-C);
 * resolves to undefined, after printing how to install Redis, when there is none.
 */
export async function withRedisServer(fn) {
  const command = locateRedisServer();
  if (!command) {
    console.log(
      `redis-server was not found on PATH, so the Redis benchmarks are skipped. Install it with:\n${INSTALL_REDIS}\n`,
    );
    return undefined;
  }
  const server = await startRedisServer(command);
  const interrupted = () => process.exit(130); // the exit hook of ./children.mjs kills the server
  process.once('SIGINT', interrupted);
  try {
    return await fn(server);
  } finally {
    process.off('SIGINT', interrupted);
    await server.stop();
  }
}

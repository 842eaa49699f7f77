/*
 * Invalidation latency: 3 leased instances, each with its own command and subscriber connection
 * to a real redis-server (started here). Instance A resets a key (then blocks one) that B and C
 * hold a cached refusal for; the latency is from A's call to the moment B's and C's limiters hear
 * it, in ms and in round trips (divided by the median PING round trip measured in the same run),
 * beside the median time of A's own call (one script round trip).
 */
import { Redis } from 'ioredis';
import { createLeasedLimiter, fixedWindow } from 'sluice';
import { createRedisLimiter } from 'sluice/redis';
import { withRedisServer } from './lib/redis-server.mjs';
import { saveResults } from './lib/results.mjs';
import { formatTable } from './lib/table.mjs';
import { median } from './lib/variants.mjs';

const TRIALS = 200;

await withRedisServer(async (server) => {
  const connections = [];
  const connect = () => {
    const connection = new Redis(server.url);
    connections.push(connection);
    return connection;
  };
  const fleet = [0, 1, 2].map(() => {
    const remote = createRedisLimiter({
      client: connect(),
      subscriber: connect(),
      algorithm: fixedWindow({ limit: 30, windowMs: 3_600_000 }),
      prefix: 'bench:invalidation:',
      onWarning: false,
    });
    return { remote, leased: createLeasedLimiter({ remote, leaseSize: 10 }) };
  });
  while (!fleet.every(({ remote }) => invalidationsOf(remote).live)) await new Promise((r) => setTimeout(r, 5));

  const ping = connect();
  const pings = [];
  for (let i = 0; i < TRIALS; i++) {
    const started = performance.now();
    await ping.ping();
    pings.push(performance.now() - started);
  }
  const roundTripMs = median(pings);

  const [a, ...others] = fleet;
  const latencies = { reset: [], block: [] };
  // Each operation's own call (one script round trip), to compare with.
  const calls = { reset: [], block: [] };
  for (let trial = 0; trial < TRIALS; trial++) {
    for (const operation of ['reset', 'block']) {
      const key = `k${trial}`;
      const heard = others.map(
        ({ remote }) =>
          new Promise((resolve) => {
            const stop = invalidationsOf(remote).subscribe((heardKey) => {
              if (heardKey !== key) return;
              stop();
              resolve(performance.now());
            });
          }),
      );
      const started = performance.now();
      await (operation === 'reset' ? a.leased.reset(key) : a.leased.block?.(key, 1_000));
      calls[operation].push(performance.now() - started);
      for (const at of await Promise.all(heard)) latencies[operation].push(at - started);
    }
  }

  const rows = Object.entries(latencies).map(([operation, values]) => {
    const sorted = [...values].sort((x, y) => x - y);
    const max = sorted[sorted.length - 1];
    return [
      operation,
      String(values.length),
      median(values).toFixed(3),
      max.toFixed(3),
      (median(values) / roundTripMs).toFixed(2),
      (max / roundTripMs).toFixed(2),
      median(calls[operation]).toFixed(3),
    ];
  });
  console.log(
    `## Invalidation latency, 3 leased instances (${TRIALS} trials per operation; PING round trip ${roundTripMs.toFixed(3)} ms median)\n`,
  );
  console.log(
    formatTable(
      [
        'operation on A',
        'heard by B and C',
        'median ms',
        'max ms',
        'median round trips',
        'max round trips',
        "A's own call, median ms",
      ].map((header, i) => ({ header, align: i === 0 ? 'left' : 'right' })),
      rows,
    ),
  );
  saveResults('invalidation', {
    roundTripMs,
    latencies: Object.fromEntries(rows.map((row) => [row[0], row.slice(1)])),
  });
  for (const { leased } of fleet) await leased.close();
  for (const connection of connections) connection.disconnect();
});

/**
 * A Redis limiter made with a subscriber has invalidations; one without would hang the bench.
 * @param {import('sluice').Limiter} remote
 */
function invalidationsOf(remote) {
  if (remote.invalidations === undefined) throw new Error('the remote has no invalidations');
  return remote.invalidations;
}

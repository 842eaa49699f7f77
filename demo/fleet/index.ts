/*
 * The fleet demo's building blocks that the benchmarks (bench/*.mjs) reuse, compiled to
 * dist/fleet.js. Not part of the package's public exports.
 */
export { commandsBetween, readCommandStats, roundTripsBetween } from './commandstats.js';
export { INSTALL_REDIS, locateRedisServer, startRedisServer } from './redis-server.js';
export { formatInteger, formatTable } from './table.js';

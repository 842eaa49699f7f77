/*
 * The fleet demo's building blocks, compiled to dist/fleet.js for the benchmarks (bench/*.mjs).
 * Not part of the package's public exports.
 */
export { commandsBetween, readCommandStats, roundTripsBetween } from './commandstats.js';
export { freePort, locateRedisServer, startRedisServer } from './redis-server.js';
export { type FleetOptions, type FleetReport, runFleet } from './run.js';
export { formatInteger, formatTable } from './table.js';

export type { DegradedTransition } from '../degraded-spells.js';
export { type InstrumentOptions, instrument } from './instrument.js';
export type { StatsSource } from './layer-stats.js';
export { ATTRIBUTES, METRICS } from './names.js';
export { type StoreErrorKind, type StoreMetricsOptions, storeMetrics } from './store-metrics.js';

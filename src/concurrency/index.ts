export type { Hold } from './hold.js';
export {
  type Acquisition,
  type ConcurrencyLimiter,
  type ConcurrencyLimiterOptions,
  createConcurrencyLimiter,
} from './limiter.js';
export { type MemoryHoldsOptions, memoryHolds } from './memory-holds.js';
export { type RedisHoldsOptions, redisHolds } from './redis-holds.js';
export { type Reservation, type Reserved, type ReserveOptions, reserve } from './reservation.js';
export type { HoldAnswer, HoldStore } from './types.js';

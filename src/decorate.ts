import type { Limiter } from './limiter.js';

/**
 * The optional members of {@link Limiter}: what some limiters can do and a decorator must not
 * hide. A decorator that leaves one out changes what its callers do, silently: without
 * `refund`, nested HTTP limits fall back from charging in parallel (one round trip per limit)
 * to reading every key first (twice the round trips per allowed request); without `charge`, a
 * reservation settled above its estimate cannot charge its debt; without `algorithmFor`, HTTP
 * rules whose limit depends on the request refuse the limiter.
 */
export const OPTIONAL_LIMITER_MEMBERS = [
  'refund',
  'charge',
  'algorithmFor',
  'block',
  'unblock',
  'penalty',
  'reward',
  'invalidate',
] as const;

/**
 * For a decorator you write around a limiter: gives `outer` each optional {@link Limiter}
 * member (see {@link OPTIONAL_LIMITER_MEMBERS}: `refund`, `charge`, `algorithmFor` and the admin operations) that `inner`
 * has and `outer` does not define itself, calling `inner`'s, and `inner`'s `invalidations`. Members `outer` defines are kept, so override what your
 * decorator must see (e.g. count refunds) and let the rest through. Members `inner` lacks stay
 * absent: callers read an absent `refund` as "this limiter cannot refund" and plan for it.
 *
 * Synchronous paths (a leased limiter's `tryLimit`, a memory limiter's `limitSync`) are not
 * forwarded: they decide without calling `outer.limit`, so they would bypass your decorator.
 *
 * Mutates and returns `outer`.
 *
 * @example
 * ```ts
 * import { createMemoryLimiter, forwardOptional, gcra, type Limiter } from 'sluice';
 *
 * function counted(inner: Limiter, onDecision: (allowed: boolean) => void): Limiter {
 *   return forwardOptional(inner, {
 *     algorithm: inner.algorithm,
 *     async limit(key, options) {
 *       const decision = await inner.limit(key, options);
 *       onDecision(decision.allowed);
 *       return decision;
 *     },
 *     peek: (key) => inner.peek(key),
 *     reset: (key) => inner.reset(key),
 *     close: () => inner.close(),
 *   });
 * }
 *
 * const limiter = counted(createMemoryLimiter({ algorithm: gcra({ limit: 10, periodMs: 1_000 }) }), () => {});
 * limiter.refund; // present: GCRA takes refunds, and the decorator keeps that
 * ```
 */
export function forwardOptional<T extends Limiter>(inner: Limiter, outer: T): T {
  for (const member of OPTIONAL_LIMITER_MEMBERS) {
    const forward = inner[member];
    if (typeof forward === 'function' && outer[member] === undefined) {
      (outer as Record<string, unknown>)[member] = (...args: unknown[]) =>
        (forward as (...args: unknown[]) => unknown).apply(inner, args);
    }
  }
  if (inner.invalidations !== undefined && outer.invalidations === undefined) {
    Object.defineProperty(outer, 'invalidations', { value: inner.invalidations, enumerable: true });
  }
  return outer;
}

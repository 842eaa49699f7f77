import type { Decision } from '../../decision.js';
import type { ReferenceModel } from './types.js';

/** A request a model admitted: when, and how many units. */
export interface Admitted {
  readonly atMs: number;
  readonly cost: number;
  /** The limit the request was admitted under. */
  readonly limit: number;
}

/**
 * An algorithm stated as a function of a key's whole history. Every algorithm of the family
 * admits a request of cost c at t when `used(t) + c ≤ limit` and reports `limit − used(t)`
 * as remaining; they differ only in how admitted requests count at t.
 */
export interface HistoryRule {
  readonly limit: number;
  /** After this long without an admission, `used` is 0 whatever came before. */
  readonly horizonMs: number;
  /** Units counted against the limit at `atMs`, given every admitted request so far (oldest first). Never rises as `atMs` grows. */
  used(history: readonly Admitted[], atMs: number, limit: number): number;
}

/**
 * A {@link ReferenceModel} that keeps every admitted request per key and recomputes from the
 * full history on every call, answering `retryAfterMs` and `resetAfterMs` by searching time for
 * the first millisecond at which the request would pass (the key would be unused): the
 * definitions themselves, with no closed-form formula to get wrong. Slow on purpose.
 * Times must not decrease from one call to the next.
 */
export function historyModel(rule: HistoryRule): ReferenceModel {
  const histories = new Map<string, Admitted[]>();
  return {
    decide(key, nowMs, cost, callLimit): Decision {
      const limit = callLimit ?? rule.limit;
      const history = histories.get(key) ?? [];
      const used = (atMs: number) => rule.used(history, atMs, limit);
      const passes = (atMs: number) => used(atMs) + cost <= limit;
      const allowed = cost <= limit && passes(nowMs);
      if (allowed && cost > 0) {
        history.push({ atMs: nowMs, cost, limit });
        histories.set(key, history);
      }
      const quietFromMs = (history.at(-1)?.atMs ?? nowMs) + rule.horizonMs;
      let retryAfterMs = 0;
      if (!allowed) {
        retryAfterMs = cost > limit ? Number.POSITIVE_INFINITY : firstMs(nowMs, quietFromMs, passes) - nowMs;
      }
      return {
        allowed,
        limit,
        remaining: Math.max(0, limit - used(nowMs)),
        retryAfterMs,
        resetAfterMs: firstMs(nowMs, quietFromMs, (atMs) => used(atMs) === 0) - nowMs,
      };
    },
  };
}

/** The first ms in `fromMs..toMs` at which `holds` (false, then true from some point on; true at `toMs`). */
function firstMs(fromMs: number, toMs: number, holds: (atMs: number) => boolean): number {
  let lo = fromMs;
  let hi = toMs;
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2);
    if (holds(mid)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

import type { Decision } from '../decision.js';
import type { Clock } from '../limiter.js';

/**
 * The blocks this process knows of, for the local fallback to honour while the store is down:
 * those issued through this process and those the store's decisions reported (a denial with
 * `reason: 'blocked'`). Each ends when the block does, on the policy's clock. A block made on
 * another instance and never met here is unknown: the store alone holds it.
 */
export interface KnownBlocks {
  /** Records a block of `key` for `durationMs` from now; a longer one already known is kept. */
  block(key: string, durationMs: number): void;
  /**
   * Records the block a store decision reports, if it reports one, unless a block was forgotten
   * since `askedAt` (the {@link KnownBlocks.mark} taken when the store was asked): a decision
   * taken before an unblock and delivered after it would bring the block back.
   */
  observe(key: string, decision: Decision, askedAt?: number): void;
  /** Forgets `key`'s block (an unblock or a reset). */
  forget(key: string): void;
  /** A mark for {@link KnownBlocks.observe}: the forgets so far. */
  mark(): number;
  /** Milliseconds `key`'s block has left; 0 when none is known. */
  leftMs(key: string): number;
  /** Blocks held now, at most `maxKeys`. */
  size(): number;
}

/**
 * Known blocks in a Map bounded by `maxKeys` (keys come from requests, so an attacker whose
 * keys are blocked can fill it): when full, the oldest recorded goes, in O(1) (no scan an
 * attacker's keys could make costly); an expired one goes when met. Not the memory store's
 * table, which when full drops every block ending before the new one.
 */
export function createKnownBlocks(maxKeys: number, clock: Clock): KnownBlocks {
  const ends = new Map<string, number>();
  // Of any key, not per key (that would be a second table to bound): a decision in flight
  // across an unrelated forget teaches nothing either, and the next one teaches it again.
  let forgets = 0;
  const nowMs = () => Math.floor(clock());
  const extend = (key: string, untilMs: number) => {
    const endMs = ends.get(key);
    if (endMs !== undefined && endMs >= untilMs) return;
    ends.delete(key); // re-inserted last: the most recently recorded goes last when full
    if (ends.size >= maxKeys) ends.delete(ends.keys().next().value as string);
    ends.set(key, untilMs);
  };
  return {
    block(key, durationMs) {
      if (durationMs > 0) extend(key, nowMs() + durationMs);
    },
    observe(key, decision, askedAt = forgets) {
      if (decision.reason !== 'blocked' || decision.degraded || askedAt !== forgets) return;
      // A blocked denial's retry waits for the later of the block's end and the algorithm's own
      // retry: the block's end, or later only while the algorithm alone would deny too. Its reset
      // is no bound (a leased limiter's leaves out the units held there); only when the retry is
      // Infinity (a cost above the limit) does a store's reset, never before the block's end, say.
      const leftMs = Number.isFinite(decision.retryAfterMs) ? decision.retryAfterMs : decision.resetAfterMs;
      if (leftMs > 0 && Number.isFinite(leftMs)) extend(key, nowMs() + Math.ceil(leftMs));
    },
    forget(key) {
      forgets++;
      ends.delete(key);
    },
    mark: () => forgets,
    leftMs(key) {
      const endMs = ends.get(key);
      if (endMs === undefined) return 0;
      const left = endMs - nowMs();
      if (left > 0) return left;
      ends.delete(key);
      return 0;
    },
    size: () => ends.size,
  };
}

import type { Decision } from '../decision.js';
import type { Clock } from '../limiter.js';
import { createBlockTable } from '../stores/memory/block-table.js';

/**
 * The blocks this process knows of, for the local fallback to honour while the store is down:
 * those issued through this process and those the store's decisions reported (a denial with
 * `reason: 'blocked'`). Each ends when the block does, on the policy's clock. A block made on
 * another instance and never met here is unknown: the store alone holds it.
 */
export interface KnownBlocks {
  /** Records a block of `key` for `durationMs` from now; a longer one already known is kept. */
  block(key: string, durationMs: number): void;
  /** Records the block a store decision reports, if it reports one. */
  observe(key: string, decision: Decision): void;
  /** Forgets `key`'s block (an unblock or a reset). */
  forget(key: string): void;
  /** Milliseconds `key`'s block has left; 0 when none is known. */
  leftMs(key: string): number;
  /** Blocks held now, at most `maxKeys`. */
  size(): number;
}

/**
 * Known blocks in a table bounded by `maxKeys` (keys come from requests, so an attacker whose
 * keys are blocked can fill it): when full, the expired go first, then the oldest recorded.
 */
export function createKnownBlocks(maxKeys: number, clock: Clock): KnownBlocks {
  const table = createBlockTable(maxKeys);
  const nowMs = () => Math.floor(clock());
  return {
    block(key, durationMs) {
      if (durationMs > 0) table.extend(key, nowMs() + durationMs);
    },
    observe(key, decision) {
      if (decision.reason !== 'blocked' || decision.degraded) return;
      // A blocked denial waits for the later of the block's end and the algorithm's own retry, so
      // the shorter of its retry and reset is the block's end, or later only while the algorithm
      // alone would deny too. Infinity (a cost above the limit) is the reset's to bound.
      const leftMs = Math.min(decision.retryAfterMs, decision.resetAfterMs);
      if (leftMs > 0 && Number.isFinite(leftMs)) table.extend(key, nowMs() + Math.ceil(leftMs));
    },
    forget: (key) => table.delete(key),
    leftMs: (key) => (table.size() === 0 ? 0 : table.leftMs(key, nowMs())),
    size: () => table.size(),
  };
}

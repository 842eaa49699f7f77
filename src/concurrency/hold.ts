import type { Clock } from '../limiter.js';
import type { HoldStore } from './types.js';

/** One slot of a key's concurrency limit, granted by `acquire`. */
export interface Hold {
  /** Unique id of this hold in the store. */
  readonly id: string;
  readonly key: string;
  /**
   * Aborted once this hold may be lost: a renewal found it expired (its slot may be someone
   * else's now), or with `heartbeatMs`, no renewal succeeded within `holdMs` (the store failed or
   * hung). Work that must not outlive its slot can listen to it. Not aborted by `release()`.
   */
  readonly signal: AbortSignal;
  /**
   * Moves the hold's expiry to `holdMs` from now. Resolves false, writing nothing, once the hold
   * has expired or been released.
   * @throws {StoreUnavailableError} when a Redis store cannot answer.
   */
  renew(): Promise<boolean>;
  /**
   * Frees the slot at once. Idempotent: later calls return the first call's promise, and a hold
   * that already expired is released as a no-op.
   * @throws {StoreUnavailableError} when a Redis store cannot answer (the hold then expires by itself).
   */
  release(): Promise<void>;
}

/** What a hold needs from its limiter. */
export interface HoldSettings {
  store: HoldStore;
  holdMs: number;
  heartbeatMs: number;
  clock: Clock;
  /** The limiter's open holds: a hold is in it from grant to release. */
  open: Set<Hold>;
}

/**
 * A granted hold, renewing itself every `heartbeatMs` when set. `sentAtMs` is when the acquire
 * was sent: the store's expiry is at least `holdMs` after it, so until then the hold is surely live.
 */
export function openHold(key: string, id: string, sentAtMs: number, settings: HoldSettings): Hold {
  const { store, holdMs, clock, open } = settings;
  const lost = new AbortController();
  let released: Promise<void> | undefined;
  let renewing: Promise<unknown> | undefined;
  let liveUntilMs = sentAtMs + holdMs;

  const renew = async (): Promise<boolean> => {
    if (released !== undefined || lost.signal.aborted) return false;
    const sentMs = clock();
    const live = await store.renew(key, id, holdMs);
    if (live) liveUntilMs = Math.max(liveUntilMs, sentMs + holdMs);
    else lost.abort(new Error(`hold ${id} of '${key}' expired before it was renewed`));
    return live;
  };
  // A renewal that fails or hangs is tried again next beat; once none has succeeded within
  // holdMs the hold may have expired in the store, and the signal says so.
  const beat = (): void => {
    if (clock() >= liveUntilMs) {
      lost.abort(new Error(`hold ${id} of '${key}' was not renewed within holdMs`));
      return;
    }
    if (renewing !== undefined) return; // a slow store gets no pile-up
    renewing = renew()
      .catch(() => false)
      .finally(() => {
        renewing = undefined;
      });
  };
  const timer = settings.heartbeatMs > 0 ? setInterval(beat, settings.heartbeatMs) : undefined;
  timer?.unref?.();
  lost.signal.addEventListener('abort', () => clearInterval(timer), { once: true });

  const hold: Hold = {
    id,
    key,
    signal: lost.signal,
    renew,
    release() {
      if (released === undefined) {
        clearInterval(timer);
        open.delete(hold);
        released = store.release(key, id);
      }
      return released;
    },
  };
  open.add(hold);
  return hold;
}

import type { Clock } from '../limiter.js';
import type { HoldStore } from './types.js';

/** One slot of a key's concurrency limit, granted by `acquire`. */
export interface Hold {
  /** Unique id of this hold in the store. */
  readonly id: string;
  readonly key: string;
  /**
   * Aborted once this hold is known to be lost: a renewal found it expired (its slot may be
   * someone else's now), or automatic renewals kept failing for `holdMs`. Work that must not
   * outlive its slot can listen to it. Not aborted by `release()`.
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

export function openHold(key: string, id: string, settings: HoldSettings): Hold {
  const { store, holdMs, clock, open } = settings;
  const lost = new AbortController();
  let released: Promise<void> | undefined;
  let renewing: Promise<boolean> | undefined;
  let renewedAtMs = clock();

  const renew = async (): Promise<boolean> => {
    if (released !== undefined || lost.signal.aborted) return false;
    const live = await store.renew(key, id, holdMs);
    if (live) renewedAtMs = clock();
    else lost.abort(new Error(`hold ${id} of '${key}' expired before it was renewed`));
    return live;
  };
  const beat = (): void => {
    if (renewing !== undefined) return; // a slow store gets no pile-up
    renewing = renew();
    renewing
      .catch(() => {
        if (clock() - renewedAtMs >= holdMs) lost.abort(new Error(`hold ${id} of '${key}' could not be renewed`));
      })
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

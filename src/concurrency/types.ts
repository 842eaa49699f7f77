/**
 * Where holds live. A store keeps, per key, the ids of live holds and when each expires; it never
 * counts a hold past its expiry, so a holder that crashed frees its slot within `holdMs`.
 * Sluice's stores (`memoryHolds`, `redisHolds`) reject a key the limiters would refuse (not a
 * non-empty, well-formed string of ≤ 512 UTF-8 bytes) with `InvalidKeyError` before any read or
 * write, whether called through `createConcurrencyLimiter` or directly; called directly, they also
 * reject a hold id a key could not be (`InvalidKeyError`), a `limit` that is not an integer ≥ 1
 * (`InvalidParamsError`) and a `holdMs` outside 1..2^31 − 1 whole ms (`InvalidDurationError`).
 */
export interface HoldStore {
  /**
   * Drops `key`'s expired holds, then records hold `id` expiring `holdMs` from now if fewer than
   * `limit` are live. Atomic: concurrent calls never grant more than `limit` live holds.
   */
  acquire(key: string, id: string, limit: number, holdMs: number): Promise<HoldAnswer>;
  /** Moves a live hold's expiry to `holdMs` from now; false (and nothing written) when it has expired or was released. */
  renew(key: string, id: string, holdMs: number): Promise<boolean>;
  /** Removes hold `id`; a hold already gone is a no-op. */
  release(key: string, id: string): Promise<void>;
  /** Live holds of `key` now (expired ones not counted). */
  held(key: string): Promise<number>;
}

/** A store's answer to {@link HoldStore.acquire}. */
export interface HoldAnswer {
  granted: boolean;
  /** Live holds of the key after this call: `limit` when denied, or 0 when a full memory store denies a new key. */
  held: number;
  /** 0 when granted; when denied, milliseconds until the key's earliest hold expires (if not renewed or released first). */
  retryAfterMs: number;
}

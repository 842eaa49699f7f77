import { ConfigError } from '../errors.js';

/** One response header as a name/value pair. */
export type HeaderPair = readonly [name: string, value: string];

/** What a header writer needs to describe one limit, in whole seconds and units. */
export interface LimitReport {
  /** Policy name (draft-11 identifier), e.g. `per-ip`. */
  name: string;
  /** Units the limit holds at most (`q`, `X-RateLimit-Limit`). */
  quota: number;
  /** Seconds over which `quota` units are granted (`w`): the algorithm's horizon, rounded up. */
  windowSeconds: number;
  /** Units still available (`r`). */
  remaining: number;
  /** Seconds until the key is fresh again (`t`), rounded up; 0 when it already is (sent as 0). */
  resetSeconds: number;
  /** The same wait in milliseconds, from the decision (for the epoch form of `X-RateLimit-Reset`). */
  resetAfterMs: number;
}

/**
 * The IETF RateLimit header drafts Sluice writes, newest first. `draft-11` is
 * draft-ietf-httpapi-ratelimit-headers-11 (`RateLimit-Policy` and `RateLimit` structured
 * lists); `draft-7` and `draft-6` are the earlier single-limit shapes some clients still read.
 */
export const RATELIMIT_DRAFTS = ['draft-11', 'draft-7', 'draft-6'] as const;
/** One of {@link RATELIMIT_DRAFTS}: which header shape to write. */
export type RateLimitDraft = (typeof RATELIMIT_DRAFTS)[number];

/** Whether `X-RateLimit-Reset` is delta seconds (default) or a Unix epoch second. */
export type LegacyReset = 'delta' | 'epoch';

/**
 * Throws {@link ConfigError} unless `name` can be written as a structured-field String
 * (printable ASCII) and is usable as a key prefix (no `:`), 1..64 characters.
 */
export function checkPolicyName(name: unknown): string {
  if (typeof name === 'string' && /^[\x20-\x39\x3b-\x7e]{1,64}$/.test(name)) return name;
  throw new ConfigError(`limit name must be 1..64 printable ASCII characters without ':', got ${JSON.stringify(name)}`);
}

/** RFC 8941 String serialisation: quoted, with `\` and `"` escaped. */
function sfString(value: string): string {
  return `"${value.replace(/[\\"]/g, '\\$&')}"`;
}

/**
 * draft-11: every limit, in list syntax.
 * `RateLimit-Policy: "per-ip";q=10;w=60, "per-key";q=3;w=60` and `RateLimit: "per-ip";r=7;t=6, "per-key";r=0;t=20`.
 * @example
 * ```ts
 * import { draft11Headers } from 'sluice/http';
 *
 * draft11Headers([
 *   { name: 'per-ip', quota: 10, windowSeconds: 60, remaining: 7, resetSeconds: 6, resetAfterMs: 5_400 },
 *   { name: 'per-key', quota: 3, windowSeconds: 60, remaining: 0, resetSeconds: 20, resetAfterMs: 19_100 },
 * ]);
 * // [['RateLimit-Policy', '"per-ip";q=10;w=60, "per-key";q=3;w=60'],
 * //  ['RateLimit', '"per-ip";r=7;t=6, "per-key";r=0;t=20']]
 * ```
 */
export function draft11Headers(limits: readonly LimitReport[]): HeaderPair[] {
  if (limits.length === 0) return [];
  return [
    ['RateLimit-Policy', limits.map((l) => `${sfString(l.name)};q=${l.quota};w=${l.windowSeconds}`).join(', ')],
    ['RateLimit', limits.map((l) => `${sfString(l.name)};r=${l.remaining};t=${l.resetSeconds}`).join(', ')],
  ];
}

/**
 * draft-7: one limit. `RateLimit-Policy: 10;w=60` and `RateLimit: limit=10, remaining=7, reset=6`.
 * @example
 * ```ts
 * import { draft7Headers } from 'sluice/http';
 *
 * draft7Headers({ name: 'per-ip', quota: 10, windowSeconds: 60, remaining: 7, resetSeconds: 6, resetAfterMs: 5_400 });
 * // [['RateLimit-Policy', '10;w=60'], ['RateLimit', 'limit=10, remaining=7, reset=6']]
 * ```
 */
export function draft7Headers(limit: LimitReport): HeaderPair[] {
  return [
    ['RateLimit-Policy', `${limit.quota};w=${limit.windowSeconds}`],
    ['RateLimit', `limit=${limit.quota}, remaining=${limit.remaining}, reset=${limit.resetSeconds}`],
  ];
}

/**
 * draft-6: one limit. `RateLimit-Policy: 10;w=60`, `RateLimit-Limit: 10`, `RateLimit-Remaining: 7`, `RateLimit-Reset: 6`.
 * @example
 * ```ts
 * import { draft6Headers } from 'sluice/http';
 *
 * draft6Headers({ name: 'per-ip', quota: 10, windowSeconds: 60, remaining: 7, resetSeconds: 6, resetAfterMs: 5_400 });
 * // RateLimit-Policy: 10;w=60, RateLimit-Limit: 10, RateLimit-Remaining: 7, RateLimit-Reset: 6
 * ```
 */
export function draft6Headers(limit: LimitReport): HeaderPair[] {
  return [
    ['RateLimit-Policy', `${limit.quota};w=${limit.windowSeconds}`],
    ['RateLimit-Limit', String(limit.quota)],
    ['RateLimit-Remaining', String(limit.remaining)],
    ['RateLimit-Reset', String(limit.resetSeconds)],
  ];
}

/**
 * The de-facto `X-RateLimit-Limit`, `-Remaining` and `-Reset` for one limit. With `'epoch'`,
 * reset is the Unix second at which the key is fresh: `ceil((epochNowMs + resetAfterMs) / 1000)`.
 * @example
 * ```ts
 * import { legacyHeaders } from 'sluice/http';
 *
 * const report = { name: 'per-ip', quota: 10, windowSeconds: 60, remaining: 7, resetSeconds: 6, resetAfterMs: 5_400 };
 * legacyHeaders(report, 'epoch', Date.now()); // X-RateLimit-Reset: the Unix second the key is fresh
 * ```
 */
export function legacyHeaders(limit: LimitReport, reset: LegacyReset, epochNowMs: number): HeaderPair[] {
  const resetValue = reset === 'epoch' ? Math.ceil((epochNowMs + limit.resetAfterMs) / 1000) : limit.resetSeconds;
  return [
    ['X-RateLimit-Limit', String(limit.quota)],
    ['X-RateLimit-Remaining', String(limit.remaining)],
    ['X-RateLimit-Reset', String(resetValue)],
  ];
}

/**
 * `Retry-After` in whole seconds: the wait rounded up, at least 1 (0 would mean "now", which is false).
 * @example
 * ```ts
 * import { retryAfterHeader } from 'sluice/http';
 *
 * retryAfterHeader(1_200); // ['Retry-After', '2']
 * ```
 */
export function retryAfterHeader(retryAfterMs: number): HeaderPair {
  return ['Retry-After', String(retryAfterSeconds(retryAfterMs))];
}

/**
 * Milliseconds of wait as the smallest whole number of seconds that covers it, at least 1.
 * @example
 * ```ts
 * import { retryAfterSeconds } from 'sluice/http';
 *
 * retryAfterSeconds(1_200); // 2
 * retryAfterSeconds(0); // 1
 * ```
 */
export function retryAfterSeconds(retryAfterMs: number): number {
  return Math.max(1, Math.ceil(retryAfterMs / 1000));
}

/** The writer of each draft, applied to every limit (draft-11) or the one closest to denial. */
export const draftWriters: Record<RateLimitDraft, (all: readonly LimitReport[], closest: LimitReport) => HeaderPair[]> =
  {
    'draft-11': (all) => draft11Headers(all),
    'draft-7': (_all, closest) => draft7Headers(closest),
    'draft-6': (_all, closest) => draft6Headers(closest),
  };

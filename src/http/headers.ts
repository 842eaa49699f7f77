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
export function sfString(value: string): string {
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

/**
 * The value to write for header `name` when `prior` is already on the response (set by another
 * Sluice middleware on the same request: app-wide limits plus a route's own). draft-11
 * `RateLimit` and `RateLimit-Policy` are structured-field lists, so both middlewares' limits are
 * kept (`prior, value`); any other field keeps one value, `value`.
 */
export function joinHeader(name: string, prior: unknown, value: string): string {
  if (typeof prior !== 'string' || prior === '' || prior.charCodeAt(0) !== QUOTE || value.charCodeAt(0) !== QUOTE) {
    return value;
  }
  return name === 'RateLimit' || name === 'RateLimit-Policy' ? `${prior}, ${value}` : value;
}

const QUOTE = 0x22;

/*
 * The parse direction: what an upstream announced in the same headers, for outbound callers
 * (`sluice/outbound`). Header values come from a third party: anything malformed, too long or
 * out of range is treated as absent, never as an error.
 */

/** One limit an upstream announced; a field is absent when its header was absent or malformed. */
export interface AnnouncedLimit {
  /** The draft-11 policy name, when the limit had one. */
  name?: string;
  /** Units per window (`q`, `limit`, `X-RateLimit-Limit`), ≥ 1. */
  quota?: number;
  /** The window (`w`) in seconds, ≥ 1. */
  windowSeconds?: number;
  /** Units left (`r`, `remaining`). */
  remaining?: number;
  /** Seconds until the limit resets (`t`, `reset`; an epoch `X-RateLimit-Reset` is turned into a delta). */
  resetSeconds?: number;
}

/** Reads one response header by its lower-case name; undefined when absent. */
export type HeaderReader = (name: string) => string | undefined;

/** Longest header value parsed; longer is treated as absent. */
const MAX_PARSED_LENGTH = 1024;
/** Largest number of seconds (or units) read from a header: 10 years, also far below 2^53. */
const MAX_HEADER_NUMBER = 315_360_000;

function headerInteger(text: string | undefined, min = 0, max = MAX_HEADER_NUMBER): number | undefined {
  if (text === undefined || !/^\d{1,12}$/.test(text.trim())) return undefined;
  const value = Number(text.trim());
  return value >= min && value <= max ? value : undefined;
}

/**
 * `Retry-After` (RFC 9110 §10.2.3) as milliseconds from `epochNowMs`: delta seconds or an
 * HTTP-date (a past date gives 0). Undefined when absent or malformed.
 * @example
 * ```ts
 * import { parseRetryAfter } from 'sluice/outbound';
 *
 * parseRetryAfter('120', Date.now()); // 120000
 * parseRetryAfter('soon', Date.now()); // undefined: malformed counts as absent
 * ```
 */
export function parseRetryAfter(value: string | undefined, epochNowMs: number): number | undefined {
  if (value === undefined || value.length > 64) return undefined;
  const seconds = headerInteger(value);
  if (seconds !== undefined) return seconds * 1000;
  // Date.parse alone would also read "12" or "2030" as dates: require an HTTP-date's weekday.
  if (!/^(Mon|Tue|Wed|Thu|Fri|Sat|Sun)[a-z]*,? /.test(value.trim())) return undefined;
  const atMs = Date.parse(value);
  return Number.isNaN(atMs) ? undefined : Math.max(0, atMs - epochNowMs);
}

/** One member of an RFC 8941 list: its item and parameters (integers, tokens or strings). */
interface ListMember {
  item: string | number;
  params: Map<string, string | number>;
}

/** The subset of RFC 8941 list syntax the RateLimit drafts use; undefined when malformed. */
function parseList(value: string | undefined): ListMember[] | undefined {
  if (value === undefined || value.length > MAX_PARSED_LENGTH) return undefined;
  const members: ListMember[] = [];
  const at = { index: 0 };
  const read = (pattern: RegExp): string | undefined => {
    pattern.lastIndex = at.index;
    const match = pattern.exec(value);
    if (match === null) return undefined;
    at.index = pattern.lastIndex;
    return match[0];
  };
  const bareItem = (): string | number | undefined => {
    const quoted = read(/"(?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\["\\])*"/y);
    if (quoted !== undefined) return quoted.slice(1, -1).replace(/\\(["\\])/g, '$1');
    const integer = read(/-?\d{1,15}(?![\d.])/y);
    if (integer !== undefined) return Number(integer);
    return read(/[A-Za-z*][\w!#$%&'*+.^`|~:/-]*/y);
  };
  read(/[ \t]*/y);
  while (at.index < value.length) {
    const item = bareItem();
    if (item === undefined) return undefined;
    const params = new Map<string, string | number>();
    while (read(/;[ ]*/y) !== undefined) {
      const key = read(/[a-z*][a-z0-9_.*-]*/y);
      if (key === undefined) return undefined;
      const paramValue = read(/=/y) === undefined ? 1 : bareItem();
      if (paramValue === undefined) return undefined;
      params.set(key, paramValue);
    }
    members.push({ item, params });
    read(/[ \t]*/y);
    if (at.index === value.length) break;
    if (read(/,[ \t]*/y) === undefined || at.index === value.length) return undefined;
  }
  return members;
}

function numberParam(member: ListMember | undefined, key: string, min = 0): number | undefined {
  const value = member?.params.get(key);
  return typeof value === 'number' && value >= min && value <= MAX_HEADER_NUMBER ? value : undefined;
}

/** Drops absent fields, so a limit reads like the headers it came from. */
function present(limit: AnnouncedLimit): AnnouncedLimit {
  return Object.fromEntries(Object.entries(limit).filter(([, value]) => value !== undefined));
}

/** draft-11 named lists, paired by policy name. */
function readDraft11(policies: ListMember[], states: ListMember[]): AnnouncedLimit[] {
  return policies
    .filter((policy) => typeof policy.item === 'string')
    .map((policy) => {
      const state = states.find((each) => each.item === policy.item);
      return present({
        name: policy.item as string,
        quota: numberParam(policy, 'q', 1),
        windowSeconds: numberParam(policy, 'w', 1),
        remaining: numberParam(state, 'r'),
        resetSeconds: numberParam(state, 't'),
      });
    });
}

/** draft-7 (`RateLimit: limit=10, remaining=7, reset=6`) or draft-6 (`RateLimit-Limit` …), with `RateLimit-Policy: 10;w=60`. */
function readSingle(read: HeaderReader, policy: ListMember | undefined): AnnouncedLimit | undefined {
  const fields = new Map<string, string>();
  for (const [, key, value] of (read('ratelimit') ?? '').slice(0, MAX_PARSED_LENGTH).matchAll(/(\w+)=(\d+)/g)) {
    fields.set(key as string, value as string);
  }
  const limit = present({
    quota: typeof policy?.item === 'number' && policy.item >= 1 ? policy.item : undefined,
    windowSeconds: numberParam(policy, 'w', 1),
    remaining: headerInteger(fields.get('remaining') ?? read('ratelimit-remaining')),
    resetSeconds: headerInteger(fields.get('reset') ?? read('ratelimit-reset')),
  });
  const quota = limit.quota ?? headerInteger(fields.get('limit') ?? read('ratelimit-limit'), 1);
  const found = quota === undefined ? limit : { ...limit, quota };
  return Object.keys(found).length > 0 ? found : undefined;
}

/** `X-RateLimit-Limit`, `-Remaining`, `-Reset` (delta seconds, or a Unix epoch second when it is one). */
function readLegacy(read: HeaderReader, epochNowMs: number): AnnouncedLimit | undefined {
  const reset = headerInteger(read('x-ratelimit-reset'), 0, 1e11);
  // No delta in use is anywhere near 10^9 s (31 years); a value that large is an epoch second.
  const resetSeconds = reset !== undefined && reset >= 1e9 ? Math.max(0, Math.ceil(reset - epochNowMs / 1000)) : reset;
  const limit = present({
    quota: headerInteger(read('x-ratelimit-limit'), 1),
    remaining: headerInteger(read('x-ratelimit-remaining')),
    resetSeconds,
  });
  return Object.keys(limit).length > 0 ? limit : undefined;
}

/**
 * Every limit an upstream's response announced, in any shape {@link draftWriters} and
 * {@link legacyHeaders} write (draft-11, draft-7, draft-6, `X-RateLimit-*`); `[]` when none.
 * Malformed values are treated as absent. `epochNowMs` turns an epoch `X-RateLimit-Reset` into seconds.
 * @example
 * ```ts
 * import { parseRateLimitHeaders } from 'sluice/outbound';
 *
 * const response = await fetch('http://127.0.0.1:8080/items');
 * const limits = parseRateLimitHeaders((name) => response.headers.get(name) ?? undefined, Date.now());
 * // e.g. [{ quota: 100, windowSeconds: 60, remaining: 0, resetSeconds: 12 }]
 * ```
 */
export function parseRateLimitHeaders(read: HeaderReader, epochNowMs: number): AnnouncedLimit[] {
  const policies = parseList(read('ratelimit-policy')) ?? [];
  const named = readDraft11(policies, parseList(read('ratelimit')) ?? []);
  const single = named.length > 0 ? undefined : readSingle(read, policies[0]);
  const legacy = readLegacy(read, epochNowMs);
  return [...named, ...(single ? [single] : []), ...(legacy ? [legacy] : [])];
}

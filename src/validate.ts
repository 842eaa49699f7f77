import type { Algorithm } from './algorithms/types.js';
import { ConfigError, InvalidCostError, InvalidKeyError } from './errors.js';
import type { Limiter } from './limiter.js';

/** Longest key accepted, in UTF-8 bytes: long enough for any identity, short enough to bound memory. */
export const MAX_KEY_BYTES = 512;

/**
 * Longest duration a timer can wait, in ms (2^31 − 1, about 24.8 days): Node runs a longer
 * `setTimeout`/`setInterval` delay after 1 ms, so every option that becomes a timer delay is
 * checked against it.
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;

// TextEncoder, not Buffer: the HTTP layer also runs on fetch-style runtimes (Hono).
const utf8 = new TextEncoder();

/**
 * Returns the cost of a call (default 1 when absent) or throws {@link InvalidCostError}.
 * `null` is not absent: a caller passing it has a bug that must not cost 1 silently.
 */
export function costOf(options: { cost?: number | null } | undefined): number {
  const cost = options?.cost === undefined ? 1 : options.cost;
  if (Number.isSafeInteger(cost) && (cost as number) >= 0) return cost as number;
  throw new InvalidCostError(`cost must be a non-negative safe integer, got ${describe(cost)}`);
}

/**
 * Whether a call asks for partial admission (`partial: true`; default `false`), or throws
 * {@link InvalidCostError}: like `cost`, a `partial` that is not a boolean is a caller's bug that
 * must not silently change how much is charged.
 */
export function partialOf(options: { partial?: boolean | null } | undefined): boolean {
  const partial = options?.partial;
  if (partial === undefined || partial === false) return false;
  if (partial === true) return true;
  throw new InvalidCostError(`partial must be a boolean, got ${describe(partial)}`);
}

/**
 * Throws {@link InvalidKeyError} unless `key` is a non-empty, well-formed string of at most 512
 * UTF-8 bytes. Well-formed (no lone surrogate) because Redis stores keys as UTF-8, where every
 * lone surrogate becomes U+FFFD: keys distinct in memory would share one Redis key.
 */
export function checkKey(key: unknown): asserts key is string {
  if (typeof key !== 'string' || key.length === 0) {
    throw new InvalidKeyError('key must be a non-empty string');
  }
  checkWellFormed(key);
  // A UTF-16 code unit encodes to at most 3 UTF-8 bytes, so short keys need no byte count.
  if (key.length * 3 > MAX_KEY_BYTES && utf8.encode(key).byteLength > MAX_KEY_BYTES) {
    throw new InvalidKeyError(`key must be at most ${MAX_KEY_BYTES} UTF-8 bytes`);
  }
}

/**
 * Throws {@link InvalidKeyError} when `key` holds a lone surrogate. For keys that are hashed
 * before they reach a store (long HTTP identities): UTF-8 encoders turn every lone surrogate
 * into U+FFFD, so distinct keys would share one hash.
 */
export function checkWellFormed(key: string): void {
  if (!(key as WellFormedString).isWellFormed()) {
    throw new InvalidKeyError('key must be well-formed UTF-16 (it holds a lone surrogate)');
  }
}

/** ES2024's `String.prototype.isWellFormed` (Node 20+), which the ES2023 lib does not declare. */
type WellFormedString = string & { isWellFormed(): boolean };

/** Throws {@link ConfigError} unless `value` is an integer in `min..max`. */
export function requireInteger(name: string, value: unknown, min = 1, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= min && value <= max) return value;
  throw new ConfigError(`${name} must be an integer in ${min}..${max}, got ${describe(value)}`);
}

/**
 * Throws {@link ConfigError} unless `value` is a whole number of milliseconds in `min..2^31 − 1`
 * ({@link MAX_TIMER_MS}): the one check of every option that becomes a timer delay.
 */
export function requireDurationMs(name: string, value: unknown, min = 1): number {
  return requireInteger(name, value, min, MAX_TIMER_MS);
}

/**
 * `value`, or `fallback` when it is `undefined`. Unlike `??`, `null` stays `null`, so the
 * option's check rejects it instead of silently taking the default.
 */
export function orDefault<T>(value: T | undefined, fallback: T): T {
  return value === undefined ? fallback : value;
}

/**
 * Every option name of `T`, each `true`: written as a literal of this type, the compiler checks
 * the list is complete and has no name `T` lacks, so it cannot drift from the options interface.
 */
export type OptionNames<T> = { readonly [K in keyof Required<T>]: true };

/**
 * Throws {@link ConfigError} unless `value` is an object (an options bag) and, when `known` is
 * given, every name in it is one of `known`'s; returns it. A misspelt option (`trustproxy`) is
 * otherwise silently its default, which for a limiter is often the unsafe one.
 */
export function requireOptions<T extends object>(
  name: string,
  value: T | undefined,
  known?: OptionNames<T> | Readonly<Record<string, true>>,
): T {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ConfigError(`${name} must be an options object, got ${describe(value)}`);
  }
  if (known !== undefined) {
    for (const option of Object.keys(value)) {
      if (!Object.hasOwn(known, option)) throw new ConfigError(unknownOption(name, option, Object.keys(known)));
    }
  }
  return value;
}

function unknownOption(name: string, option: string, known: readonly string[]): string {
  const lower = option.toLowerCase();
  const meant = known.find((candidate) => candidate.toLowerCase() === lower);
  const hint = meant === undefined ? `known options: ${known.join(', ')}` : `did you mean '${meant}'?`;
  return `${name}: unknown option '${option}' (${hint})`;
}

/** Throws {@link ConfigError} unless `value` is a function (or `undefined` when `optional`). */
export function requireFunction<T>(name: string, value: T, optional = false): T {
  if (typeof value === 'function' || (optional && value === undefined)) return value;
  throw new ConfigError(`${name} must be a function, got ${describe(value)}`);
}

/** Throws {@link ConfigError} unless `value` is a boolean or `undefined`; returns it or `fallback`. */
export function optionalBoolean(name: string, value: unknown, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value === 'boolean') return value;
  throw new ConfigError(`${name} must be a boolean, got ${describe(value)}`);
}

/** Throws {@link ConfigError} unless `value` has the shape of an {@link Algorithm} (as the cores build). */
export function requireAlgorithm(name: string, value: unknown): Algorithm {
  const candidate = value as Partial<Algorithm> | null | undefined;
  if (
    typeof candidate?.name !== 'string' ||
    !Number.isSafeInteger(candidate.limit) ||
    (candidate.limit as number) < 1 ||
    !Number.isSafeInteger(candidate.horizonMs) ||
    !Number.isSafeInteger(candidate.slots) ||
    (candidate.slots as number) < 1 ||
    !Array.isArray(candidate.scriptParams) ||
    typeof candidate.decide !== 'function' ||
    typeof candidate.freshAtMs !== 'function' ||
    (candidate.refund !== undefined && typeof candidate.refund !== 'function') ||
    (candidate.charge !== undefined && typeof candidate.charge !== 'function')
  ) {
    throw new ConfigError(
      `${name} must be an Algorithm, e.g. gcra({ limit: 100, periodMs: 60_000 }), got ${describe(value)}`,
    );
  }
  return candidate as Algorithm;
}

/** Throws {@link ConfigError} unless `value` has the shape of a {@link Limiter}. */
export function requireLimiter(name: string, value: unknown): Limiter {
  const candidate = value as Partial<Limiter> | null | undefined;
  if (
    typeof candidate?.limit !== 'function' ||
    typeof candidate.peek !== 'function' ||
    typeof candidate.reset !== 'function' ||
    typeof candidate.close !== 'function' ||
    typeof candidate.algorithm?.limit !== 'number'
  ) {
    throw new ConfigError(`${name} must be a Limiter, got ${describe(value)}`);
  }
  return candidate as Limiter;
}

/** A short, never-throwing description of an option's value for an error message. */
export function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (typeof value === 'function') return 'a function';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object' && value !== null) return 'an object';
  return String(value);
}

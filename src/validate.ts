import { ConfigError, InvalidCostError, InvalidKeyError } from './errors.js';

/** Longest key accepted, in UTF-8 bytes: long enough for any identity, short enough to bound memory. */
export const MAX_KEY_BYTES = 512;

// TextEncoder, not Buffer: the HTTP layer also runs on fetch-style runtimes (Hono).
const utf8 = new TextEncoder();

/** Returns the cost of a call (default 1) or throws {@link InvalidCostError}. */
export function costOf(options: { cost?: number } | undefined): number {
  const cost = options?.cost ?? 1;
  if (Number.isSafeInteger(cost) && cost >= 0) return cost;
  throw new InvalidCostError(`cost must be a non-negative safe integer, got ${String(cost)}`);
}

/** Throws {@link InvalidKeyError} unless `key` is a non-empty string of at most 512 UTF-8 bytes. */
export function checkKey(key: unknown): asserts key is string {
  if (typeof key !== 'string' || key.length === 0) {
    throw new InvalidKeyError('key must be a non-empty string');
  }
  // A UTF-16 code unit encodes to at most 3 UTF-8 bytes, so short keys need no byte count.
  if (key.length * 3 > MAX_KEY_BYTES && utf8.encode(key).byteLength > MAX_KEY_BYTES) {
    throw new InvalidKeyError(`key must be at most ${MAX_KEY_BYTES} UTF-8 bytes`);
  }
}

/** Throws {@link ConfigError} unless `value` is an integer in `min..max`. */
export function requireInteger(name: string, value: unknown, min = 1, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= min && value <= max) return value;
  throw new ConfigError(`${name} must be an integer in ${min}..${max}, got ${String(value)}`);
}

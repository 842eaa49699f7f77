import { ConfigError } from '../../errors.js';

/*
 * Redis Cluster hashes only the part of a key between its first `{` and the first `}` after it,
 * and the whole key when that part is empty. A raw key in the tag could end the tag early or
 * leave it empty (`}x` → `prefix{}x}`): the state and its `:block` companion would then hash to
 * different slots and the script could not read the block. So the tag is the key escaped
 * injectively (`%` → `%25`, `}` → `%7D`), never empty (`''` → `%`, which no escape yields),
 * after a prefix that holds no brace.
 */

const NEEDS_ESCAPE = /[%}]/g;
const escaped = (char: string) => (char === '%' ? '%25' : '%7D');

/**
 * The Redis key of `key` under `prefix`: `prefix + '{' + tag + '}'`, where the tag is `key` with
 * `%` written `%25` and `}` written `%7D` (the empty key: `%`). Distinct keys get distinct names,
 * and every companion `name + suffix` shares the name's Cluster slot. `prefix` must have passed
 * {@link checkPrefix}.
 */
export function redisKeyName(prefix: string, key: string): string {
  return `${prefix}{${tagOf(key)}}`;
}

// Most keys hold neither character: two plain scans find that faster than a regex replace.
function tagOf(key: string): string {
  if (key.length === 0) return '%';
  return key.includes('%') || key.includes('}') ? key.replace(NEEDS_ESCAPE, escaped) : key;
}

/**
 * Returns `prefix` if it is a string without `{` or `}` (a brace would move or empty the hash tag
 * Cluster routes by), else throws {@link ConfigError} naming `prefix`.
 */
export function checkPrefix(prefix: unknown): string {
  if (typeof prefix !== 'string') throw new ConfigError('prefix must be a string');
  if (/[{}]/.test(prefix)) {
    throw new ConfigError(`prefix must not contain '{' or '}' (it would change the Cluster hash tag): ${prefix}`);
  }
  return prefix;
}

import { InvalidKeyError } from '../errors.js';
import { checkWellFormed, describe, MAX_KEY_BYTES } from '../validate.js';
import type { LimitRule, RequestInfo } from './options.js';

const encoder = new TextEncoder();

/**
 * The key under which the HTTP layer stores a rule's state for a key function's value: what an
 * admin endpoint passes to the rule's limiter to `reset`, `block`, `unblock`, `reward` or
 * `invalidate` one client, without knowing the format. `ruleName` is the rule's `name`
 * (`'default'` when it has none); `key` is what the rule's key function returns for the client.
 *
 * The result is `<ruleName>:id:<key>`, so no header value can name a client's IP bucket
 * (`<ruleName>:ip:<address>`, used when the key function returns `undefined`). When that would
 * exceed the 512-byte key limit (an attacker-sized API key header) it is
 * `<ruleName>:id#<SHA-256 of key, base64url>`: deterministic, bounded, unforgeable, hence async.
 * Web Crypto and TextEncoder rather than node:crypto and Buffer, so the Hono adapter runs on
 * runtimes without Node's built-ins.
 * @throws {InvalidKeyError} (rejects) naming `ruleName` when `key` is not a string (a key
 * function that returned a number, an object, `false`…: coerced, every such request would share
 * one bucket, e.g. `'[object Object]'`), or holds a lone surrogate, as every store would.
 * @example
 * ```ts
 * import { createMemoryLimiter, gcra } from 'sluice';
 * import { storageKeyOf } from 'sluice/http';
 *
 * const perKey = createMemoryLimiter({ algorithm: gcra({ limit: 100, periodMs: 60_000 }) });
 * // the rule { name: 'per-key', limiter: perKey, key: (r) => r.header('x-api-key') ?? null }
 * await perKey.block?.(await storageKeyOf('per-key', 'key-42'), 60_000); // 'per-key:id:key-42'
 * await perKey.reset(await storageKeyOf('per-key', 'key-42'));
 * ```
 */
export async function storageKeyOf(ruleName: string, key: string): Promise<string> {
  if (typeof key !== 'string') {
    throw new InvalidKeyError(
      `the key of '${ruleName}' must be a string, got ${describe(key)}: a key function returns a string, undefined (the client IP) or null (the limit does not apply)`,
    );
  }
  checkWellFormed(key);
  const stored = `${ruleName}:id:${key}`;
  if (stored.length * 3 <= MAX_KEY_BYTES || encoder.encode(stored).length <= MAX_KEY_BYTES) return stored;
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', encoder.encode(key)));
  const base64 = btoa(String.fromCharCode(...digest));
  return `${ruleName}:id#${base64.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')}`;
}

/** The prefix of a rule's client-IP keys: `<ruleName>:ip:`, then the request's `ipKey`. */
export function ipKeyPrefix(ruleName: string): string {
  return `${ruleName}:ip:`;
}

/**
 * The storage key a rule (a limit or an in-flight cap, by its `name` and `key` function)
 * charges for one request: the client IP key `<name>:ip:<ipKey>` when the key function is absent
 * or returns `undefined` or `''`, else {@link storageKeyOf} of its value; `null` when it returns
 * `null` (the rule does not apply to the request).
 * @throws {InvalidKeyError} (rejects) as {@link storageKeyOf}, or the key function's own error.
 */
export async function ruleKeyOf<Req>(
  rule: { readonly name: string; readonly key?: LimitRule<Req>['key'] },
  info: RequestInfo<Req>,
): Promise<string | null> {
  const identity = rule.key ? await rule.key(info) : undefined;
  if (identity === null) return null;
  if (identity === undefined || identity === '') return ipKeyPrefix(rule.name) + info.ipKey;
  return storageKeyOf(rule.name, identity);
}

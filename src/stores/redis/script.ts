import type { InvalidationChange } from '../../limiter.js';

/** A Lua script with the SHA-1 (hex) of its UTF-8 source, the name Redis caches it by. */
export interface LuaScript {
  readonly source: string;
  readonly sha: string;
}

/**
 * Names a script by the SHA-1 Redis will give it, so EVALSHA can be tried first. Hashes with Web
 * Crypto, which Node, Bun, Deno and Workers all have, hence async; Sluice's own scripts carry
 * SHA-1s computed when their snapshots were generated (src/stores/redis/lua/shas.ts).
 * @example
 * ```ts
 * import { defineScript, runScript, toScriptClient } from 'sluice/redis';
 * declare const redis: unknown; // an ioredis, iovalkey or node-redis client
 * const incr = await defineScript("return redis.call('INCR', KEYS[1])");
 * const count = await runScript(toScriptClient(redis), incr, ['visits'], []);
 * ```
 */
export async function defineScript(source: string): Promise<LuaScript> {
  const digest = await crypto.subtle.digest('SHA-1', new TextEncoder().encode(source));
  return { source, sha: Array.from(new Uint8Array(digest), (byte) => byte.toString(16).padStart(2, '0')).join('') };
}

/**
 * The two commands Sluice needs from a Redis client. Adapters for ioredis (and later
 * node-redis, iovalkey) map a client onto this; algorithm code never sees the client.
 */
export interface ScriptClient {
  evalsha(sha: string, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown>;
  eval(source: string, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown>;
}

/**
 * Runs a script in one round trip when Redis has it cached: EVALSHA, and on NOSCRIPT
 * (after SCRIPT FLUSH, a restart or a failover) EVAL, which also caches it again.
 * Every call site goes through here, so no caller ever sees NOSCRIPT.
 * Rejects with the client's own error for anything else; the limiters wrap it in
 * `StoreUnavailableError`, this does not.
 * @example
 * ```ts
 * import { Redis } from 'ioredis';
 * import { defineScript, runScript, toScriptClient } from 'sluice/redis';
 *
 * const client = toScriptClient(new Redis());
 * const getDel = await defineScript("return redis.call('GETDEL', KEYS[1])");
 * const token = await runScript(client, getDel, ['token:abc'], []);
 * ```
 */
export function runScript(
  client: ScriptClient,
  script: LuaScript,
  keys: readonly string[],
  args: readonly (string | number)[],
): Promise<unknown> {
  return runScriptThen(client, script, keys, args, (reply) => reply, rethrow);
}

const rethrow = (error: unknown): never => {
  throw error;
};

/**
 * `runScript(client, script, keys, args).then(onReply, onError)` with one promise fewer: the
 * client's reply goes to `onReply` directly, and only a NOSCRIPT rejection takes the EVAL
 * detour. An unbatched decision goes through here: on its hot path that saves a promise, its
 * reaction and a microtask per call. `onError` also gets a synchronous throw of the client.
 */
export function runScriptThen<T>(
  client: ScriptClient,
  script: LuaScript,
  keys: readonly string[],
  args: readonly (string | number)[],
  onReply: (reply: unknown) => T,
  onError: (error: unknown) => T,
): Promise<T> {
  try {
    return Promise.resolve(client.evalsha(script.sha, keys, args)).then(onReply, (error: unknown) =>
      isNoScript(error)
        ? Promise.resolve(client.eval(script.source, keys, args)).then(onReply, onError)
        : onError(error),
    );
  } catch (error) {
    return Promise.reject(error).catch(onError);
  }
}

function isNoScript(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('NOSCRIPT');
}

/**
 * What a script call does, as told to a {@link ClientWrapper}: `'decide'` (`limit`, unbatched),
 * `'peek'`, `'batch'` (every call of a batching limiter, one or more decisions), `'refund'`,
 * `'charge'` (debt), `'reset'`, `'heartbeat'`.
 */
/** A call that changes a key on an operator's request (`reset`, `block`, …), each its own operation. */
export type AdminOperation = InvalidationChange | 'penalty';

export type StoreOperation = 'decide' | 'peek' | 'batch' | 'refund' | 'charge' | AdminOperation | 'heartbeat';

/**
 * Wraps the {@link ScriptClient} one kind of call goes through, e.g. to time it: called once per
 * operation at construction (never per call), so a limiter given none pays nothing.
 * `storeMetrics` from `sluice/otel` is one.
 */
export type ClientWrapper = (client: ScriptClient, operation: StoreOperation) => ScriptClient;

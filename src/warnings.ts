import { ConfigError, docsLink } from './errors.js';

/**
 * Runtime warnings: something works, but not as the operator probably meant. Each code fires at
 * most once per limiter (or middleware) and has an entry in docs/errors.md.
 *
 * | code | from | when |
 * |---|---|---|
 * | `SLUICE_DEGRADED` | `withFailurePolicy` | the store could not decide and no `onDegraded` is wired: decisions follow the failure policy |
 * | `SLUICE_REDIS_EVICTION` | `createRedisLimiter` | the server's `maxmemory-policy` can evict Sluice's keys, which resets their limits |
 * | `SLUICE_LEASE_NO_INVALIDATIONS` | `createLeasedLimiter` | the remote has no `invalidations` (a Redis limiter without `subscriber`): a reset or block on another instance does not reach units leased here |
 * | `SLUICE_HTTP_FORWARDED_UNTRUSTED` | HTTP | a request carries `X-Forwarded-For` or `Forwarded` but no proxy is trusted: keys use the socket address |
 * | `SLUICE_HTTP_TRUST_ALL` | HTTP | `trustProxy` trusts every hop: the client picks its own key with a forged header |
 * | `SLUICE_HTTP_NO_CLIENT_ADDRESS` | HTTP | a request has no readable socket address: it is keyed as `unknown` |
 * | `SLUICE_HTTP_STORE_UNAVAILABLE` | HTTP | the store failed on a route that fails open: requests pass unlimited |
 * | `SLUICE_HTTP_REFUND_FAILED` | HTTP | a refund after a nested denial failed: those units stay spent |
 * | `SLUICE_HTTP_SETTLE_FAILED` | HTTP | a refund or reset after the response (`countWhen`, `resetWhen`) failed, or a predicate threw |
 * | `SLUICE_HTTP_ROUTE_UNREACHABLE` | HTTP | a `routes` entry can never match a request |
 */
export type SluiceWarningCode =
  | 'SLUICE_DEGRADED'
  | 'SLUICE_REDIS_EVICTION'
  | 'SLUICE_LEASE_NO_INVALIDATIONS'
  | 'SLUICE_HTTP_FORWARDED_UNTRUSTED'
  | 'SLUICE_HTTP_TRUST_ALL'
  | 'SLUICE_HTTP_NO_CLIENT_ADDRESS'
  | 'SLUICE_HTTP_STORE_UNAVAILABLE'
  | 'SLUICE_HTTP_REFUND_FAILED'
  | 'SLUICE_HTTP_SETTLE_FAILED'
  | 'SLUICE_HTTP_ROUTE_UNREACHABLE';

/** A one-time warning, as handed to an `onWarning` sink. */
export interface SluiceWarning {
  code: SluiceWarningCode;
  /** What was seen and what to configure instead, ending with the code's docs/errors.md entry. */
  message: string;
}

/**
 * The `onWarning` option of every Sluice factory that warns: a function, or `false` to turn
 * warnings off. Default: `process.emitWarning` (type `SluiceWarning`), or `console.warn` where
 * there is no `process`.
 */
export type WarningSink = false | ((warning: SluiceWarning) => void);

/** A function that forwards each code to its sink the first time only. */
export type Warner = (code: SluiceWarningCode, message: string) => void;

/**
 * Returns a {@link Warner} over `sink` (undefined: the process default). A sink's throw is swallowed.
 *
 * @throws {ConfigError} naming `onWarning` when `sink` is neither a function, `false` nor undefined.
 */
export function createWarner(sink: WarningSink | undefined): Warner {
  if (sink !== undefined && sink !== false && typeof sink !== 'function') {
    throw new ConfigError(`onWarning must be a function or false, got ${typeof sink}`);
  }
  const seen = new Set<SluiceWarningCode>();
  const deliver = sink === undefined ? emitProcessWarning : sink;
  return (code, message) => {
    if (deliver === false || seen.has(code)) return;
    seen.add(code);
    try {
      deliver({ code, message: `${message} ${docsLink(code)}` });
    } catch {
      // A logging bug must not turn a warning into a failed decision.
    }
  };
}

function emitProcessWarning(warning: SluiceWarning): void {
  const emit = globalThis.process?.emitWarning;
  if (typeof emit === 'function')
    emit.call(globalThis.process, warning.message, { type: 'SluiceWarning', code: warning.code });
  else console.warn(`[${warning.code}] ${warning.message}`);
}

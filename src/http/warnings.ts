/**
 * Runtime warnings of the HTTP layer. Each fires at most once per middleware instance; every
 * code has an entry in docs/http.md ("Warnings").
 *
 * | code | when |
 * |---|---|
 * | `SLUICE_HTTP_FORWARDED_UNTRUSTED` | a request carries `X-Forwarded-For` or `Forwarded` but no proxy is trusted: keys use the socket address |
 * | `SLUICE_HTTP_TRUST_ALL` | `trustProxy` trusts every hop: the client picks its own key with a forged header |
 * | `SLUICE_HTTP_NO_CLIENT_ADDRESS` | a request has no readable socket address: it is keyed as `unknown` |
 * | `SLUICE_HTTP_STORE_UNAVAILABLE` | the store failed on a route that fails open: requests pass unlimited |
 * | `SLUICE_HTTP_REFUND_FAILED` | a refund after a nested denial failed: those units stay spent |
 * | `SLUICE_HTTP_SETTLE_FAILED` | a refund or reset after the response (`countWhen`, `resetWhen`) failed or a predicate threw |
 * | `SLUICE_HTTP_ROUTE_UNREACHABLE` | a `routes` entry can never match a request (at construction; Fastify: when ready) |
 */
export type HttpWarningCode =
  | 'SLUICE_HTTP_FORWARDED_UNTRUSTED'
  | 'SLUICE_HTTP_TRUST_ALL'
  | 'SLUICE_HTTP_NO_CLIENT_ADDRESS'
  | 'SLUICE_HTTP_STORE_UNAVAILABLE'
  | 'SLUICE_HTTP_REFUND_FAILED'
  | 'SLUICE_HTTP_SETTLE_FAILED'
  | 'SLUICE_HTTP_ROUTE_UNREACHABLE';

/** A one-time warning from the HTTP layer; each `code` fires at most once per limiter (see docs/http.md#warnings). */
export interface HttpWarning {
  code: HttpWarningCode;
  /** What was seen and what to configure instead. */
  message: string;
}

/** Where warnings go: a function, or `false` to turn them off. Default: `process.emitWarning` (type `SluiceWarning`). */
export type WarningSink = false | ((warning: HttpWarning) => void);

/** Returns `warn(code, message)`, which forwards each code to `sink` the first time only. */
export function createWarner(sink: WarningSink | undefined): (code: HttpWarningCode, message: string) => void {
  const seen = new Set<HttpWarningCode>();
  const deliver = sink === undefined ? emitProcessWarning : sink;
  return (code, message) => {
    if (deliver === false || seen.has(code)) return;
    seen.add(code);
    deliver({ code, message });
  };
}

function emitProcessWarning(warning: HttpWarning): void {
  const emit = globalThis.process?.emitWarning;
  if (typeof emit === 'function')
    emit.call(globalThis.process, warning.message, { type: 'SluiceWarning', code: warning.code });
  else console.warn(`[${warning.code}] ${warning.message}`);
}

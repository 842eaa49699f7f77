import type { AlgorithmParams } from '../algorithms/types.js';
import type { FailureMode } from '../decision.js';
import type { Limiter } from '../limiter.js';
import type { WarningSink } from '../warnings.js';
import type { HttpDegradedChange } from './degraded.js';
import type { LegacyReset, RateLimitDraft } from './headers.js';
import type { InFlightRule } from './in-flight.js';
import type { ChargeResult } from './nested.js';
import type { ProxyHeader, TrustProxy } from './proxy.js';
import type { ReservationRule } from './reservations.js';
import type { HttpResponse, ProblemDetails } from './response.js';
import type { RouteMatching } from './routes.js';

/** What an adapter reads from a request: nothing framework-specific but `request` itself. */
export interface RequestFacts<Req> {
  /** The framework's own request object (Express `req`, Fastify `request`, Hono `Context`, Koa `ctx`, node `IncomingMessage`). */
  request: Req;
  method: string;
  /** Path without the query string. */
  path: string;
  /** The route pattern when the framework knows it (`/users/:id`); defaults to `path`. */
  routeId?: string;
  /** How the framework's router compares paths, when it can tell (Express app settings); else the option's. */
  routeMatching?: Required<RouteMatching>;
  /** A request header by lower-case name; repeated fields joined with `, `. */
  header(name: string): string | undefined;
  /** The socket peer address, as the runtime reports it. */
  remoteAddress: string | undefined;
}

/** The request as key, cost and skip functions see it. */
export interface RequestInfo<Req> extends RequestFacts<Req> {
  routeId: string;
  /** The client address after the proxy walk (canonical text, unmasked), or `undefined` if unreadable. */
  readonly ip: string | undefined;
  /** The default key: `ip` with IPv6 masked to the prefix (`2001:db8:abcd:1200::/56`), or `unknown`. */
  readonly ipKey: string;
}

/** A per-request number of units: a constant, or computed from the request. */
export type CostFunction<Req> = (request: RequestInfo<Req>) => number | Promise<number>;

/** One limit applied to every request a middleware sees. */
export interface LimitRule<Req> {
  /**
   * Policy name: the draft-11 header identifier and the key prefix (`<name>:<key>`), so two
   * rules on one limiter keep separate budgets. 1..64 printable ASCII characters without `:`.
   * Default `default`.
   */
  name?: string;
  /** The limiter holding this limit's state (memory, Redis, or a failure-policy wrapper). */
  limiter: Limiter;
  /**
   * The identity to limit (API key, user id). Returning `undefined` or `''` falls back to the
   * client IP key; returning `null` means this limit does not apply to the request (it is not
   * charged and not reported in the headers), e.g. a per-API-key limit on a request without a
   * key. Keys longer than 512 UTF-8 bytes are replaced by their SHA-256. Any other value (a
   * number, an object, a boolean) is never coerced: the request fails with `InvalidKeyError`
   * naming the limit (the framework's 500), so no two clients share a key by accident.
   */
  key?: (request: RequestInfo<Req>) => string | null | undefined | Promise<string | null | undefined>;
  /**
   * Requests for which this returns true are not charged by this limit (the others still
   * apply). The same as a key function returning `null`, for rules keyed by IP.
   */
  skip?: (request: RequestInfo<Req>) => boolean | Promise<boolean>;
  /** Units one request spends: a non-negative safe integer or a function of the request. Default 1. */
  cost?: number | CostFunction<Req>;
  /**
   * This limit's numbers for the request (a plan): per-call `params` for the limiter's algorithm,
   * e.g. `{ limit: 1_000, periodMs: 60_000 }` for GCRA, or a function of the request, sync or
   * async (a plan lookup); `undefined` keeps the limiter's own. `RateLimit-Policy` reports the
   * numbers that decided the request. Needs a limiter with `algorithmFor` (every Sluice store
   * and layer): `ConfigError` otherwise; a function's bad params fail the request with
   * `InvalidParamsError`.
   */
  params?: AlgorithmParams | ParamsFunction<Req>;
  /**
   * Which responses spend this limit (by final status code), e.g. `(status) => status >= 400`
   * to count failed logins only. The units are charged before the handler (so concurrent
   * requests never pass the limit) and given back after a response that does not count. A
   * response that never completed (the client disconnected) counts. Needs a limiter with
   * `refund` (GCRA, token bucket): `ConfigError` otherwise. Default: every response counts.
   */
  countWhen?: OutcomePredicate;
  /** After a response for which this returns true, the key is reset (a successful login clears the failed attempts). */
  resetWhen?: OutcomePredicate;
}

/** A limit's numbers for one request (a plan lookup); `undefined` keeps the limiter's own. */
export type ParamsFunction<Req> = (
  request: RequestInfo<Req>,
) => AlgorithmParams | undefined | Promise<AlgorithmParams | undefined>;

/** A predicate on the final status code of an admitted request's response. */
export type OutcomePredicate = (status: number) => boolean;

/**
 * Per-route costs: one number for every limit, a map from limit name to units (unlisted
 * limits keep their own cost), or a function of the request and the limit name.
 */
export type CostSpec<Req> =
  | number
  | Readonly<Record<string, number>>
  | ((request: RequestInfo<Req>, limitName: string) => number | Promise<number>);

/** What one route changes. */
export interface RoutePolicy<Req> {
  /** `true`: the route is not limited and gets no headers. */
  skip?: boolean;
  /**
   * This route's failure mode (e.g. a login route fails closed while the rest fails open).
   * Passed to each limiter call as `{ failure }`, so a `withFailurePolicy` limiter applies it
   * (`'fallback'` included); when a limiter without a policy throws `StoreUnavailableError`,
   * `'open'` lets the request pass and `'closed'`/`'fallback'` answer 503.
   */
  failure?: FailureMode;
  /** Overrides costs on this route, e.g. `{ 'per-key': 10 }` for an expensive report. */
  cost?: CostSpec<Req>;
  /** Extra limits for this route, charged with the middleware's limits, all or nothing. */
  limits?: readonly LimitRule<Req>[];
  /** {@link LimitRule.countWhen} for every limit of this route without its own. */
  countWhen?: OutcomePredicate;
  /** {@link LimitRule.resetWhen} for every limit of this route without its own. */
  resetWhen?: OutcomePredicate;
}

/** Why a request was not admitted, as given to a custom `respond` hook. */
export interface DeniedOutcome {
  /**
   * 429 limited (also a local-fallback denial); 413 the cost can never be admitted (it exceeds
   * the limit); 503 the store could not decide and the route fails closed.
   */
  status: 429 | 413 | 503;
  /** Every limit of the request with its decision and what was charged. Empty when the store failed. */
  limits: readonly ChargeResult[];
  /** Rate-limit headers and `Retry-After` the default response carries. */
  headers: readonly (readonly [string, string])[];
  /** The default RFC 9457 body. */
  problem: ProblemDetails;
  /** The store error, when the store could not decide. */
  error?: unknown;
}

/** Options shared by every adapter (`Req` is the framework's request type). */
export interface HttpLimitOptions<Req> {
  /** Shorthand for `limits: [{ limiter }]`: one limit named `default`, keyed by client IP. */
  limiter?: Limiter;
  /** The limits every request is charged, all or nothing (nested limits: edge per-IP, per-client, ...). */
  limits?: LimitRule<Req> | readonly LimitRule<Req>[];
  /**
   * Caps on requests in flight per key, beside `limits` and all or nothing with them: a request
   * holds a slot from admission until its response is over (or the client disconnected).
   * See {@link InFlightRule} and docs/concurrency.md.
   */
  inFlight?: InFlightRule<Req> | readonly InFlightRule<Req>[];
  /**
   * Names of `limits` whose cost is an estimate: the handler settles the real cost with
   * `settleReservation(request, name, actual)` (refund below it, debt above it) within the
   * entry's `ttlMs` (default 60,000: `'tokens'` or `{ name: 'tokens', ttlMs: 300_000 }`);
   * unsettled, the estimate stands. Each needs a limiter with `refund`. See docs/concurrency.md.
   */
  reservations?: readonly ReservationRule[];
  /** Which proxies may report the client address. Default `false`: the socket address. See {@link TrustProxy}. */
  trustProxy?: TrustProxy;
  /** The forwarding header read when a proxy is trusted. Default `x-forwarded-for`. */
  proxyHeader?: ProxyHeader;
  /** IPv6 prefix length for IP keys: 32..64, or 128 for the full address. Default 56. */
  ipv6Prefix?: number;
  /** The IETF RateLimit draft to write, or `false` for none. Default `draft-11`. */
  headers?: RateLimitDraft | false;
  /** Also write `X-RateLimit-*`: `true`/`'delta'` (reset in seconds from now) or `'epoch'`. Default `false`. */
  legacyHeaders?: boolean | LegacyReset;
  /** `draft-11` lists every limit (`all`, default) or only the one closest to denial. */
  headerLimits?: 'all' | 'closest';
  /**
   * The failure mode of every route without its own (see {@link RoutePolicy.failure}).
   * Unset: policy limiters keep their own, and a thrown `StoreUnavailableError` answers 503.
   */
  failure?: FailureMode;
  /** Requests for which this returns true are not limited and get no headers. */
  skip?: (request: RequestInfo<Req>) => boolean | Promise<boolean>;
  /** Client addresses, CIDRs or proxy-addr names (`loopback`) never limited. */
  allowList?: readonly string[];
  /**
   * Per-route policy by `"METHOD routeId"` (tried first) or `"routeId"`, e.g.
   * `{ 'POST /login': { failure: 'closed' } }`. Entries and request paths are compared in
   * canonical form (see `canonicalPath` in docs/http.md#routes), so `/LOGIN`, `/login/`,
   * `//login`, `/%6Cogin` and `/login;x` find the `/login` entry.
   */
  routes?: Readonly<Record<string, RoutePolicy<Req>>>;
  /**
   * How `routes` entries compare with paths; set it as your router does. Default
   * `{ caseSensitive: false, strict: false }` (Express and @koa/router defaults). The Express
   * adapter reads the app's `case sensitive routing` and `strict routing` settings instead.
   * @throws {ConfigError} when a field is not a boolean.
   */
  routeMatching?: RouteMatching;
  /** RFC 9457 `type` URI of the problem bodies. Default `about:blank`. */
  problemType?: string;
  /** Replaces the default problem+json response of a denial. */
  respond?: (outcome: DeniedOutcome, request: RequestInfo<Req>) => HttpResponse | Promise<HttpResponse>;
  /** Where warnings go (each code once). Default `process.emitWarning`; `false` turns them off. */
  onWarning?: WarningSink;
  /** Hears every store failure (for alerting: a silent fail-open is a limiter that stopped existing). */
  onStoreError?: (error: unknown, request: RequestInfo<Req>) => void;
  /**
   * Told when requests turn degraded (a limit answered by a failure policy, or the store threw)
   * and when they recover, with the count of degraded requests in between and the duration:
   * two events per outage, where the policy's per-decision `onDegraded` fires per limit and
   * request. A throw from it is swallowed.
   */
  onDegradedChange?: (event: HttpDegradedChange) => void;
  /** Epoch milliseconds for `legacyHeaders: 'epoch'`. Default `Date.now`. */
  epochClock?: () => number;
}

import type { Decision, FailureMode } from '../decision.js';
import { isSluiceError } from '../errors.js';
import { requireFunction } from '../validate.js';
import { createWarner } from '../warnings.js';
import { chargesFor } from './charges.js';
import { type NamedRule, resolveConfig, routeRules } from './config.js';
import { watchDegraded } from './degraded.js';
import type { HeaderPair } from './headers.js';
import { holdInFlight, inFlightCaps } from './in-flight.js';
import { type ChargeResult, chargeAll } from './nested.js';
import type { DeniedOutcome, HttpLimitOptions, RequestFacts, RequestInfo, RoutePolicy } from './options.js';
import { createDescriber, createIpKeyer } from './request-info.js';
import { openReservations, reservationTtls } from './reservations.js';
import { type HttpResponse, problemResponse } from './response.js';
import { compileRoutes } from './routes.js';
import { type Settle, settlerOf } from './settle.js';
import { type SyncPlan, syncPlanOf, syncResult } from './sync-path.js';
import { denial, rateLimitHeaders, storeDown } from './verdict.js';

/**
 * What an adapter does next: continue to the handler with `headers`, or send `response`. A
 * `settle` on a continue verdict (limits that count by outcome) must be called once the
 * response is over, with its status code, or `undefined` when it did not complete.
 */
export type Verdict =
  | { action: 'continue'; headers: HeaderPair[]; settle?: Settle }
  | { action: 'respond'; response: HttpResponse };

/** The framework-agnostic HTTP limiter every adapter maps onto. */
export interface HttpLimiter<Req> {
  /**
   * Decides one request. `route` is a per-route policy the framework carries itself (Fastify
   * route `config`; `false` exempts the route); it replaces a matching `routes` entry. Rejects
   * only with errors of user functions (key, cost, skip, respond) or non-store limiter errors.
   */
  check(facts: RequestFacts<Req>, route?: RoutePolicy<Req> | false): Promise<Verdict>;
  /**
   * `check` without a Promise where none is needed: the verdict itself when the request's one
   * limit decides synchronously (a memory limiter, a lease hit) and no user function runs;
   * else `check`'s Promise. Never throws: errors reject the returned Promise.
   */
  decide(facts: RequestFacts<Req>, route?: RoutePolicy<Req> | false): Verdict | Promise<Verdict>;
  /**
   * Validates a route policy ahead of its first request (the Fastify adapter calls it as
   * routes register). @throws {ConfigError} on an invalid policy.
   */
  checkRoute(route: RoutePolicy<Req>): void;
  /**
   * Warns (`SLUICE_HTTP_ROUTE_UNREACHABLE`) about `routes` entries that match none of the
   * app's registered routes, given as `[method, pattern]` (the Fastify adapter calls it when ready).
   */
  checkRegistered(registered: readonly (readonly [string, string])[]): void;
}

const CONTINUE: Verdict = { action: 'continue', headers: [] };
const SKIP = { skip: true } as const;

/**
 * Builds the HTTP core: request facts in, verdict (headers, or a 429/413/503 response) out.
 * Adapters only map their framework's request and response onto it.
 *
 * Per request: route policy → skip / allow list → key and cost of every limit → all charged,
 * all or nothing (see `chargeAll`) → headers from the decisions → continue, or a denial.
 *
 * @throws {ConfigError} on invalid options: no limits, duplicate or invalid names, invalid
 * trustProxy, allowList, ipv6Prefix, header draft, failure mode or constant cost.
 * @example
 * ```ts
 * import { createMemoryLimiter, gcra } from 'sluice';
 * import { createHttpLimiter } from 'sluice/http';
 *
 * // An adapter for a framework Sluice does not ship: facts in, verdict out.
 * const http = createHttpLimiter<Request>({
 *   limiter: createMemoryLimiter({ algorithm: gcra({ limit: 60, periodMs: 60_000 }) }),
 * });
 * async function handle(request: Request, remoteAddress: string): Promise<Response> {
 *   const verdict = await http.check({
 *     request,
 *     method: request.method,
 *     path: new URL(request.url).pathname,
 *     header: (name) => request.headers.get(name) ?? undefined,
 *     remoteAddress,
 *   });
 *   if (verdict.action === 'respond') {
 *     const { status, headers, body } = verdict.response;
 *     return new Response(body, { status, headers: headers as [string, string][] });
 *   }
 *   return new Response('ok', { headers: verdict.headers as [string, string][] });
 * }
 * ```
 */
export function createHttpLimiter<Req>(options: HttpLimitOptions<Req>): HttpLimiter<Req> {
  const config = resolveConfig(options);
  const warn = createWarner(options.onWarning);
  const describe = createDescriber(config, warn);
  const degraded = watchDegraded(requireFunction('onDegradedChange', options.onDegradedChange, true));
  const routeTable = compileRoutes(options.routes ?? {}, config.routeMatching, warn);
  const caps = options.inFlight === undefined ? undefined : inFlightCaps(options.inFlight);
  const reservations = options.reservations && reservationTtls(options.reservations, config.rules);
  const ipKeyOf = createIpKeyer(config, warn);
  // The synchronous path needs no caller function and no per-request state beyond the limit.
  const syncable = caps === undefined && !reservations && !options.skip && !config.allowed && !options.respond;
  const syncPlans = new WeakMap<RoutePolicy<Req>, SyncPlan | null>();
  const defaultPlan = syncable ? syncPlanOf(config.rules, undefined, config.failure, config) : undefined;
  const syncPlanFor = (route: RoutePolicy<Req> | undefined) => {
    if (!syncable || route === undefined) return defaultPlan;
    let plan = syncPlans.get(route);
    if (plan === undefined) {
      plan = syncPlanOf(rulesOf(route), route, route.failure ?? config.failure, config) ?? null;
      syncPlans.set(route, plan);
    }
    return plan ?? undefined;
  };
  const rulesByRoute = new WeakMap<RoutePolicy<Req>, NamedRule<Req>[]>();
  const rulesOf = (route: RoutePolicy<Req> | undefined) => {
    if (route === undefined) return config.rules;
    let rules = rulesByRoute.get(route);
    if (rules === undefined) {
      rules = routeRules(route, config.rules);
      rulesByRoute.set(route, rules);
    }
    return rules;
  };

  const respond = async (outcome: DeniedOutcome, info: RequestInfo<Req>): Promise<Verdict> => ({
    action: 'respond',
    response: options.respond
      ? await options.respond(outcome, info)
      : problemResponse(outcome.problem, outcome.headers),
  });

  const onRefundError = (error: unknown, charge: { name: string }) =>
    warn(
      'SLUICE_HTTP_REFUND_FAILED',
      `Refunding limit "${charge.name}" failed (${messageOf(error)}); those units stay spent.`,
    );

  const onSettleError = (error: unknown, charge: { name: string }) =>
    warn(
      'SLUICE_HTTP_SETTLE_FAILED',
      `Giving back or resetting limit "${charge.name}" after the response failed (${messageOf(error)}); the charge stays.`,
    );

  // In-flight caps hold a slot once the rate limits admitted the request (docs/concurrency.md).
  const held = (verdict: Verdict, results: ChargeResult[], info: RequestInfo<Req>, mode: FailureMode | undefined) => {
    if (caps === undefined || verdict.action !== 'continue') return verdict;
    return holdInFlight(caps, verdict, results, info, {
      mode,
      problemType: config.problemType,
      respond,
      onStoreError: options.onStoreError,
      onGiveBackError: onRefundError,
      onFailOpen: (error) =>
        warn(
          'SLUICE_HTTP_STORE_UNAVAILABLE',
          `An in-flight cap's store failed and the route fails open (${messageOf(error)}).`,
        ),
    });
  };

  const routeOf = (facts: RequestFacts<Req>, native: RoutePolicy<Req> | false | undefined) =>
    native === false
      ? SKIP
      : (native ??
        routeTable.lookup(facts.method, facts.routeId ?? facts.path, facts.routeMatching ?? config.routeMatching));

  const planVerdict = (plan: SyncPlan, key: string, decision: Decision): Verdict => {
    const headers = plan.headers(decision);
    degraded?.decided([syncResult(plan, key, decision)]);
    if (decision.allowed) return { action: 'continue', headers };
    const response = plan.denial(decision, headers);
    if (response !== undefined) return { action: 'respond', response };
    const outcome = denial([syncResult(plan, key, decision)], headers, config.problemType);
    return { action: 'respond', response: problemResponse(outcome.problem, outcome.headers) };
  };

  // A store that failed: the route's failure mode answers (closed: 503; open: unlimited).
  const storeFailed = (error: unknown, info: RequestInfo<Req>, mode: FailureMode | undefined) => {
    if (!isSluiceError(error, 'ERR_SLUICE_STORE_UNAVAILABLE')) throw error;
    degraded?.storeFailed();
    options.onStoreError?.(error, info);
    if ((mode ?? 'closed') !== 'open') return respond(storeDown(config.problemType, error), info);
    warn(
      'SLUICE_HTTP_STORE_UNAVAILABLE',
      `The store failed and the route fails open: requests pass unlimited (${messageOf(error)}).`,
    );
    return held(CONTINUE, [], info, mode);
  };

  // One IP-keyed limit: decided without a Promise when the limiter can, else by one awaited
  // limit; undefined when the route needs the general path (checkAwaited).
  const decidePlanned = (facts: RequestFacts<Req>, route: RoutePolicy<Req> | undefined) => {
    const plan = syncPlanFor(route);
    if (plan === undefined) return undefined;
    const key = plan.keyOf(ipKeyOf(facts));
    const decision = plan.decide?.(key, plan.options);
    if (decision !== undefined) return planVerdict(plan, key, decision);
    return plan.limiter.limit(key, plan.options).then(
      (awaited) => planVerdict(plan, key, awaited),
      (error: unknown) => storeFailed(error, describe(facts), plan.options.failure),
    );
  };

  const checkAwaited = async (facts: RequestFacts<Req>, route: RoutePolicy<Req> | undefined): Promise<Verdict> => {
    const info = describe(facts);
    if (config.allowed && info.ip !== undefined && config.allowed(info.ip, 0)) return CONTINUE;
    if (options.skip && (await options.skip(info))) return CONTINUE;
    const mode = route?.failure ?? config.failure;
    const charges = await chargesFor(rulesOf(route), route?.cost, info, mode);
    if (charges.length === 0) return held(CONTINUE, [], info, mode);
    let outcome: Awaited<ReturnType<typeof chargeAll>>;
    try {
      outcome = await chargeAll(charges, onRefundError);
    } catch (error) {
      return storeFailed(error, info, mode);
    }
    degraded?.decided(outcome.results);
    const headers = rateLimitHeaders(outcome.results, config);
    if (outcome.allowed) {
      const settle = settlerOf(outcome.results, onSettleError);
      const verdict = await held(
        settle ? { action: 'continue', headers, settle } : { action: 'continue', headers },
        outcome.results,
        info,
        mode,
      );
      if (reservations && verdict.action === 'continue') openReservations(facts.request, outcome.results, reservations);
      return verdict;
    }
    return respond(denial(outcome.results, headers, config.problemType), info);
  };

  const decide = (facts: RequestFacts<Req>, native?: RoutePolicy<Req> | false): Verdict | Promise<Verdict> => {
    try {
      const route = routeOf(facts, native);
      if (route?.skip) return CONTINUE;
      return decidePlanned(facts, route) ?? checkAwaited(facts, route);
    } catch (error) {
      return Promise.reject(error);
    }
  };

  return {
    decide,
    check: async (facts, native) => decide(facts, native),
    checkRoute: (route) => void rulesOf(route),
    checkRegistered(registered) {
      const unmatched = routeTable.unregistered(registered);
      if (unmatched.length === 0) return;
      warn(
        'SLUICE_HTTP_ROUTE_UNREACHABLE',
        `routes entries that match no registered route: ${unmatched.join(', ')}. Write them as the routes are registered.`,
      );
    },
  };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

import { createHash } from 'node:crypto';
import proxyaddr from 'proxy-addr';
import type { FailureMode } from '../decision.js';
import { ConfigError, type StoreUnavailableError } from '../errors.js';
import { MAX_KEY_BYTES, requireInteger } from '../validate.js';
import { addressKey, checkIpv6Prefix, DEFAULT_IPV6_PREFIX, formatAddress } from './client-ip.js';
import {
  checkPolicyName,
  draftWriters,
  type HeaderPair,
  type LimitReport,
  legacyHeaders,
  RATELIMIT_DRAFTS,
  retryAfterHeader,
  retryAfterSeconds,
} from './headers.js';
import { type Charge, type ChargeResult, chargeAll } from './nested.js';
import type {
  CostSpec,
  DeniedOutcome,
  HttpLimitOptions,
  LimitRule,
  RequestFacts,
  RequestInfo,
  RoutePolicy,
} from './options.js';
import { compileTrust, forwardedHops, resolveClientAddress, trustsEverything } from './proxy.js';
import { type HttpResponse, problem, problemResponse } from './response.js';
import { createWarner } from './warnings.js';

/** What an adapter does next: continue to the handler with `headers`, or send `response`. */
export type Verdict = { action: 'continue'; headers: HeaderPair[] } | { action: 'respond'; response: HttpResponse };

/** The framework-agnostic HTTP limiter every adapter maps onto. */
export interface HttpLimiter<Req> {
  /**
   * Decides one request. `route` is a per-route policy the framework carries itself
   * (Fastify route `config`); it replaces a matching `routes` entry. Rejects only with errors
   * of user functions (key, cost, skip, respond) or non-store limiter errors.
   */
  check(facts: RequestFacts<Req>, route?: RoutePolicy<Req> | false): Promise<Verdict>;
}

const CONTINUE: Verdict = { action: 'continue', headers: [] };

/**
 * Builds the HTTP core: request facts in, verdict (headers, or a 429/413/503 response) out.
 *
 * @throws {ConfigError} on invalid options: no limits, duplicate or invalid names, invalid
 * trustProxy, allowList, ipv6Prefix, header draft, failure mode or constant cost.
 */
export function createHttpLimiter<Req>(options: HttpLimitOptions<Req>): HttpLimiter<Req> {
  const rules = normalizeRules(options);
  for (const route of Object.values(options.routes ?? {})) checkRoute(route, rules);
  const trust = compileTrust(options.trustProxy);
  const proxyHeader = options.proxyHeader ?? 'x-forwarded-for';
  if (proxyHeader !== 'x-forwarded-for' && proxyHeader !== 'forwarded') {
    throw new ConfigError(`proxyHeader must be 'x-forwarded-for' or 'forwarded', got ${String(proxyHeader)}`);
  }
  const ipv6Prefix = checkIpv6Prefix(options.ipv6Prefix ?? DEFAULT_IPV6_PREFIX);
  const draft = options.headers ?? 'draft-11';
  if (draft !== false && !RATELIMIT_DRAFTS.includes(draft)) {
    throw new ConfigError(`headers must be one of ${RATELIMIT_DRAFTS.join(', ')} or false, got ${String(draft)}`);
  }
  const legacy = options.legacyHeaders === true ? 'delta' : (options.legacyHeaders ?? false);
  if (legacy !== false && legacy !== 'delta' && legacy !== 'epoch') {
    throw new ConfigError(`legacyHeaders must be a boolean, 'delta' or 'epoch', got ${String(legacy)}`);
  }
  const failureMode = options.failureMode === undefined ? undefined : checkFailureMode(options.failureMode);
  const allowed = options.allowList ? compileList('allowList', options.allowList) : undefined;
  const problemType = options.problemType ?? 'about:blank';
  const epochClock = options.epochClock ?? Date.now;
  const warn = createWarner(options.onWarning);
  const trustAll = trust !== undefined && trustsEverything(trust);

  const clientAddress = (facts: RequestFacts<Req>) => {
    if (trust === undefined) {
      if (facts.header('x-forwarded-for') !== undefined || facts.header('forwarded') !== undefined) {
        warn(
          'SLUICE_HTTP_FORWARDED_UNTRUSTED',
          'A request carries X-Forwarded-For or Forwarded but trustProxy is not set: clients are keyed by the socket address (the proxy, if there is one). Set trustProxy to your proxies.',
        );
      }
    } else if (trustAll) {
      warn(
        'SLUICE_HTTP_TRUST_ALL',
        'trustProxy trusts every hop, so the leftmost forwarded address is the key and any client can forge it. Trust your proxies by address or hop count.',
      );
    }
    const value = trust === undefined ? undefined : facts.header(proxyHeader);
    return resolveClientAddress(
      facts.remoteAddress,
      value === undefined ? [] : forwardedHops(proxyHeader, value),
      trust,
    );
  };

  const describe = (facts: RequestFacts<Req>): RequestInfo<Req> => {
    let resolved: { address: ReturnType<typeof clientAddress> } | undefined;
    const address = () => {
      resolved ??= { address: clientAddress(facts) };
      return resolved.address;
    };
    return {
      ...facts,
      routeId: facts.routeId ?? facts.path,
      get ip() {
        const client = address();
        return client === undefined ? undefined : formatAddress(client);
      },
      get ipKey() {
        const client = address();
        if (client !== undefined) return addressKey(client, ipv6Prefix);
        warn('SLUICE_HTTP_NO_CLIENT_ADDRESS', 'A request has no readable client address; it is keyed as "unknown".');
        return 'unknown';
      },
    };
  };

  const routeOf = (info: RequestInfo<Req>, native: RoutePolicy<Req> | false | undefined) => {
    if (native === false) return { skip: true };
    if (native !== undefined) return native;
    return options.routes?.[`${info.method} ${info.routeId}`] ?? options.routes?.[info.routeId];
  };

  const chargesOf = async (
    info: RequestInfo<Req>,
    route: RoutePolicy<Req> | undefined,
    failure: FailureMode | undefined,
  ): Promise<Charge[]> => {
    const all = route?.limits ? [...rules, ...normalizeList(route.limits)] : rules;
    return Promise.all(
      all.map(async (rule) => {
        const identity = rule.key ? await rule.key(info) : undefined;
        const charge: Charge = {
          name: rule.name,
          limiter: rule.limiter,
          key: storageKey(rule.name, identity === undefined || identity === '' ? info.ipKey : String(identity)),
          cost: await costFor(rule, route?.cost, info),
        };
        if (failure !== undefined) charge.failure = failure;
        return charge;
      }),
    );
  };

  const reportsOf = (results: readonly ChargeResult[]): HeaderPair[] => {
    if (results.some((result) => result.decision.degraded)) return [];
    const reports = results.map(toReport);
    const closest = closestToDenial(reports, results);
    const pairs: HeaderPair[] = [];
    if (draft !== false)
      pairs.push(...draftWriters[draft](options.headerLimits === 'closest' ? [closest] : reports, closest));
    if (legacy !== false) pairs.push(...legacyHeaders(closest, legacy, epochClock()));
    return pairs;
  };

  const deny = async (outcome: DeniedOutcome, info: RequestInfo<Req>): Promise<Verdict> => {
    const response = options.respond
      ? await options.respond(outcome, info)
      : problemResponse(outcome.problem, outcome.headers);
    return { action: 'respond', response };
  };

  const unavailable = async (info: RequestInfo<Req>, mode: FailureMode, error: unknown): Promise<Verdict> => {
    options.onStoreError?.(error, info);
    if (mode === 'open') {
      warn(
        'SLUICE_HTTP_STORE_UNAVAILABLE',
        `The rate limiter's store failed and the route fails open: requests pass unlimited (${describeError(error)}).`,
      );
      return CONTINUE;
    }
    const details = problem(problemType, 503, "The rate limiter's store is unavailable and this route fails closed.", {
      reason: 'store-unavailable',
    });
    return deny({ status: 503, limits: [], headers: [], problem: details, error }, info);
  };

  return {
    async check(facts, native) {
      const info = describe(facts);
      const route = routeOf(info, native);
      if (route?.skip) return CONTINUE;
      if (allowed !== undefined && info.ip !== undefined && allowed(info.ip, 0)) return CONTINUE;
      if (options.skip && (await options.skip(info))) return CONTINUE;
      const mode = route?.failureMode ?? failureMode;
      const charges = await chargesOf(info, route, mode);
      let outcome: Awaited<ReturnType<typeof chargeAll>>;
      try {
        outcome = await chargeAll(charges, (error, charge) =>
          warn(
            'SLUICE_HTTP_REFUND_FAILED',
            `Refunding limit "${charge.name}" failed (${describeError(error)}); those units stay spent.`,
          ),
        );
      } catch (error) {
        if (isStoreUnavailable(error)) return unavailable(info, mode ?? 'closed', error);
        throw error;
      }
      const { results } = outcome;
      const headers = reportsOf(results);
      if (outcome.allowed) return { action: 'continue', headers };

      const denied = results.filter((result) => result.state === 'denied');
      const degraded = denied.find((result) => result.decision.degraded && result.decision.failure !== 'fallback');
      if (degraded) {
        const waitMs = degraded.decision.retryAfterMs;
        const retry = Number.isFinite(waitMs) && waitMs > 0 ? [retryAfterHeader(waitMs)] : [];
        const reason = degraded.decision.degradedReason ?? 'store-unavailable';
        const details = problem(
          problemType,
          503,
          `The rate limiter could not decide for limit "${degraded.name}" (${reason}).`,
          {
            limit: degraded.name,
            reason,
          },
        );
        return deny({ status: 503, limits: results, headers: retry, problem: details }, info);
      }
      const longest = denied.reduce((a, b) => (b.decision.retryAfterMs > a.decision.retryAfterMs ? b : a));
      const waitMs = longest.decision.retryAfterMs;
      if (!Number.isFinite(waitMs)) {
        const detail = `This request costs ${longest.cost} units; limit "${longest.name}" holds at most ${longest.decision.limit}, so it can never be admitted.`;
        return deny(
          {
            status: 413,
            limits: results,
            headers,
            problem: problem(problemType, 413, detail, { limit: longest.name }),
          },
          info,
        );
      }
      const seconds = retryAfterSeconds(waitMs);
      const details = problem(problemType, 429, `Rate limit "${longest.name}" exceeded; retry in ${seconds} s.`, {
        limit: longest.name,
        retryAfter: seconds,
      });
      return deny(
        { status: 429, limits: results, headers: [...headers, retryAfterHeader(waitMs)], problem: details },
        info,
      );
    },
  };
}

type NamedRule<Req> = LimitRule<Req> & { name: string };

function normalizeRules<Req>(options: HttpLimitOptions<Req>): NamedRule<Req>[] {
  if (options.limiter !== undefined && options.limits !== undefined) {
    throw new ConfigError('give either limiter or limits, not both');
  }
  const list = options.limiter !== undefined ? [{ limiter: options.limiter }] : options.limits;
  if (list === undefined) throw new ConfigError('limiter or limits is required');
  const rules = normalizeList(Array.isArray(list) ? list : [list as LimitRule<Req>]);
  if (rules.length === 0) throw new ConfigError('limits must not be empty');
  checkUniqueNames(rules.map((rule) => rule.name));
  return rules;
}

function normalizeList<Req>(list: readonly LimitRule<Req>[]): NamedRule<Req>[] {
  return list.map((rule) => {
    const limiter = rule?.limiter as { limit?: unknown; peek?: unknown; algorithm?: unknown } | undefined;
    if (!limiter || typeof limiter.limit !== 'function' || typeof limiter.peek !== 'function' || !limiter.algorithm) {
      throw new ConfigError('every limit needs a Sluice limiter (limit, peek, algorithm)');
    }
    if (typeof rule.cost === 'number') requireInteger('cost', rule.cost, 0);
    return { ...rule, name: checkPolicyName(rule.name ?? 'default') };
  });
}

function checkUniqueNames(names: readonly string[]): void {
  const seen = new Set<string>();
  for (const name of names) {
    if (seen.has(name)) throw new ConfigError(`limit names must be unique; "${name}" appears twice`);
    seen.add(name);
  }
}

function checkRoute<Req>(route: RoutePolicy<Req>, rules: readonly NamedRule<Req>[]): void {
  if (route.failureMode !== undefined) checkFailureMode(route.failureMode);
  const extra = route.limits ? normalizeList(route.limits) : [];
  checkUniqueNames([...rules, ...extra].map((rule) => rule.name));
  const { cost } = route;
  if (typeof cost === 'number') requireInteger('route cost', cost, 0);
  else if (cost !== undefined && typeof cost === 'object') {
    for (const [name, units] of Object.entries(cost)) requireInteger(`route cost of "${name}"`, units, 0);
  }
}

function checkFailureMode(mode: unknown): FailureMode {
  if (mode === 'open' || mode === 'closed' || mode === 'fallback') return mode;
  throw new ConfigError(`failureMode must be 'open', 'closed' or 'fallback', got ${String(mode)}`);
}

function compileList(name: string, list: readonly string[]): (address: string, hop: number) => boolean {
  try {
    return proxyaddr.compile([...list]);
  } catch (error) {
    throw new ConfigError(`${name}: ${(error as Error).message}`);
  }
}

async function costFor<Req>(
  rule: NamedRule<Req>,
  spec: CostSpec<Req> | undefined,
  info: RequestInfo<Req>,
): Promise<number> {
  let cost: number | undefined;
  if (typeof spec === 'number') cost = spec;
  else if (typeof spec === 'function') cost = await spec(info, rule.name);
  else if (spec !== undefined) cost = spec[rule.name];
  if (cost === undefined) cost = typeof rule.cost === 'function' ? await rule.cost(info) : (rule.cost ?? 1);
  return cost;
}

/** `<name>:<identity>`, or `<name>:#<sha256>` when that would exceed the key limit. */
function storageKey(name: string, identity: string): string {
  const key = `${name}:${identity}`;
  if (key.length * 3 <= MAX_KEY_BYTES || Buffer.byteLength(key, 'utf8') <= MAX_KEY_BYTES) return key;
  return `${name}:#${createHash('sha256').update(identity).digest('base64url')}`;
}

function toReport(result: ChargeResult): LimitReport {
  const { decision } = result;
  return {
    name: result.name,
    quota: decision.limit,
    windowSeconds: Math.max(1, Math.ceil(result.limiter.algorithm.horizonMs / 1000)),
    remaining: decision.remaining,
    resetSeconds: Math.ceil(decision.resetAfterMs / 1000),
    resetAfterMs: decision.resetAfterMs,
  };
}

/** The denied limit with the longest wait, or else the one with the fewest units left (then the latest reset). */
function closestToDenial(reports: readonly LimitReport[], results: readonly ChargeResult[]): LimitReport {
  let best = 0;
  for (let index = 1; index < reports.length; index++) {
    const [a, b] = [results[best] as ChargeResult, results[index] as ChargeResult];
    const [ra, rb] = [reports[best] as LimitReport, reports[index] as LimitReport];
    const aDenied = a.state === 'denied';
    const bDenied = b.state === 'denied';
    if (aDenied !== bDenied) {
      if (bDenied) best = index;
    } else if (aDenied) {
      if (b.decision.retryAfterMs > a.decision.retryAfterMs) best = index;
    } else if (rb.remaining < ra.remaining || (rb.remaining === ra.remaining && rb.resetAfterMs > ra.resetAfterMs)) {
      best = index;
    }
  }
  return reports[best] as LimitReport;
}

/**
 * By code, not `instanceof`: the CJS build gives each entry point its own copy of the error
 * classes, so a limiter from `sluice/redis` throws a class `sluice/express` never saw.
 */
function isStoreUnavailable(error: unknown): error is StoreUnavailableError {
  return (error as { code?: unknown } | null)?.code === 'ERR_SLUICE_STORE_UNAVAILABLE';
}

function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

import proxyaddr from 'proxy-addr';
import type { FailureMode } from '../decision.js';
import { ConfigError } from '../errors.js';
import { type OptionNames, orDefault, requireInteger, requireOptions } from '../validate.js';
import { checkIpv6Prefix, DEFAULT_IPV6_PREFIX } from './client-ip.js';
import { checkPolicyName, type LegacyReset, RATELIMIT_DRAFTS, type RateLimitDraft } from './headers.js';
import type { RefundableLimiter } from './nested.js';
import type { HttpLimitOptions, LimitRule, RoutePolicy } from './options.js';
import { compileTrust, type ProxyHeader, type TrustFunction } from './proxy.js';
import { checkRouteMatching, type RouteMatching } from './routes.js';

/** A limit rule with its name settled. */
export type NamedRule<Req> = LimitRule<Req> & { name: string };

/** Validated options, as the core reads them. */
export interface HttpConfig<Req> {
  rules: NamedRule<Req>[];
  trust: TrustFunction | undefined;
  proxyHeader: ProxyHeader;
  ipv6Prefix: number;
  draft: RateLimitDraft | false;
  legacy: LegacyReset | false;
  headerLimits: 'all' | 'closest';
  failure: FailureMode | undefined;
  allowed: TrustFunction | undefined;
  problemType: string;
  epochClock: () => number;
  routeMatching: Required<RouteMatching>;
}

const HTTP_OPTION_NAMES: OptionNames<HttpLimitOptions<unknown>> = {
  limiter: true,
  limits: true,
  inFlight: true,
  reservations: true,
  trustProxy: true,
  ipv6Prefix: true,
  proxyHeader: true,
  headers: true,
  legacyHeaders: true,
  headerLimits: true,
  failure: true,
  skip: true,
  allowList: true,
  routes: true,
  routeMatching: true,
  problemType: true,
  respond: true,
  onWarning: true,
  onStoreError: true,
  onDegradedChange: true,
  epochClock: true,
};
/** The adapters' own options (Fastify's `hook`, Hono's `clientAddress`) reach the core with the rest. */
const ADAPTER_OPTION_NAMES = { ...HTTP_OPTION_NAMES, hook: true, clientAddress: true } as const;
const LIMIT_RULE_OPTION_NAMES: OptionNames<LimitRule<unknown>> = {
  name: true,
  limiter: true,
  key: true,
  skip: true,
  cost: true,
  params: true,
  countWhen: true,
  resetWhen: true,
};
const ROUTE_POLICY_OPTION_NAMES: OptionNames<RoutePolicy<unknown>> = {
  skip: true,
  failure: true,
  cost: true,
  limits: true,
  countWhen: true,
  resetWhen: true,
};
/** Fastify's route policy also names its `hook`. */
const ADAPTER_ROUTE_POLICY_OPTION_NAMES = { ...ROUTE_POLICY_OPTION_NAMES, hook: true } as const;

/**
 * Validates every option once, at construction.
 * @throws {ConfigError} on the first invalid option.
 */
export function resolveConfig<Req>(options: HttpLimitOptions<Req>): HttpConfig<Req> {
  requireOptions('rate limit options', options, ADAPTER_OPTION_NAMES);
  if (options.limiter !== undefined && options.limits !== undefined) {
    throw new ConfigError('give either limiter or limits, not both');
  }
  const list = options.limiter !== undefined ? [{ limiter: options.limiter }] : options.limits;
  if (list === undefined) throw new ConfigError('limiter or limits is required');
  const rules = nameRules(Array.isArray(list) ? list : [list as LimitRule<Req>]);
  if (rules.length === 0) throw new ConfigError('limits must not be empty');
  checkUniqueNames(rules);
  for (const route of Object.values(requireOptions('routes', orDefault(options.routes, {})))) routeRules(route, rules);

  const proxyHeader = options.proxyHeader ?? 'x-forwarded-for';
  if (proxyHeader !== 'x-forwarded-for' && proxyHeader !== 'forwarded') {
    throw new ConfigError(`proxyHeader must be 'x-forwarded-for' or 'forwarded', got ${String(proxyHeader)}`);
  }
  const draft = options.headers ?? 'draft-11';
  if (draft !== false && !RATELIMIT_DRAFTS.includes(draft)) {
    throw new ConfigError(`headers must be one of ${RATELIMIT_DRAFTS.join(', ')} or false, got ${String(draft)}`);
  }
  const legacy = options.legacyHeaders === true ? 'delta' : (options.legacyHeaders ?? false);
  if (legacy !== false && legacy !== 'delta' && legacy !== 'epoch') {
    throw new ConfigError(`legacyHeaders must be a boolean, 'delta' or 'epoch', got ${String(legacy)}`);
  }
  const headerLimits = options.headerLimits ?? 'all';
  if (headerLimits !== 'all' && headerLimits !== 'closest') {
    throw new ConfigError(`headerLimits must be 'all' or 'closest', got ${String(headerLimits)}`);
  }
  return {
    rules,
    trust: compileTrust(options.trustProxy),
    proxyHeader,
    ipv6Prefix: checkIpv6Prefix(options.ipv6Prefix ?? DEFAULT_IPV6_PREFIX),
    draft,
    legacy,
    headerLimits,
    failure: options.failure === undefined ? undefined : checkFailureMode(options.failure),
    allowed: options.allowList ? compileAllowList(options.allowList) : undefined,
    problemType: options.problemType ?? 'about:blank',
    epochClock: options.epochClock ?? Date.now,
    routeMatching: checkRouteMatching(options.routeMatching),
  };
}

/**
 * Every rule a route charges: the middleware's, then the route's own.
 * @throws {ConfigError} on an invalid route policy.
 */
export function routeRules<Req>(route: RoutePolicy<Req>, rules: readonly NamedRule<Req>[]): NamedRule<Req>[] {
  requireOptions('a route policy', route, ADAPTER_ROUTE_POLICY_OPTION_NAMES);
  if (route.failure !== undefined) checkFailureMode(route.failure);
  const { cost } = route;
  if (typeof cost === 'number') requireInteger('route cost', cost, 0);
  else if (cost !== undefined && typeof cost === 'object') {
    for (const [name, units] of Object.entries(cost)) requireInteger(`route cost of "${name}"`, units, 0);
  }
  const all = route.limits ? [...rules, ...nameRules(route.limits)] : [...rules];
  checkUniqueNames(all);
  if (route.countWhen === undefined && route.resetWhen === undefined) return all;
  return all.map((rule) =>
    checkOutcomes({
      ...rule,
      countWhen: rule.countWhen ?? route.countWhen,
      resetWhen: rule.resetWhen ?? route.resetWhen,
    }),
  );
}

function nameRules<Req>(list: readonly LimitRule<Req>[]): NamedRule<Req>[] {
  return list.map((rule) => {
    requireOptions(`limit "${rule?.name ?? 'default'}"`, rule, LIMIT_RULE_OPTION_NAMES);
    const limiter = rule?.limiter as { limit?: unknown; algorithm?: unknown } | undefined;
    if (!limiter || typeof limiter.limit !== 'function' || !limiter.algorithm) {
      throw new ConfigError('every limit needs a Sluice limiter (with limit() and algorithm)');
    }
    if (typeof rule.cost === 'number') requireInteger('cost', rule.cost, 0);
    checkParams(rule);
    return checkOutcomes({ ...rule, name: checkPolicyName(rule.name ?? 'default') });
  });
}

/** Per-request numbers need a limiter that honours them; fixed ones are checked now. */
function checkParams<Req>(rule: LimitRule<Req>): void {
  const { params, limiter } = rule;
  if (params === undefined) return;
  if (typeof limiter.algorithmFor !== 'function') {
    throw new ConfigError(`params of limit "${rule.name ?? 'default'}" need a limiter with algorithmFor`);
  }
  if (typeof params === 'function') return;
  try {
    limiter.algorithmFor(params);
  } catch (error) {
    throw new ConfigError(`params of limit "${rule.name ?? 'default'}": ${(error as Error).message}`);
  }
}

/** Counting by outcome gives units back, which only a limiter with `refund` can do exactly. */
function checkOutcomes<Req>(rule: NamedRule<Req>): NamedRule<Req> {
  for (const option of ['countWhen', 'resetWhen'] as const) {
    if (rule[option] !== undefined && typeof rule[option] !== 'function') {
      throw new ConfigError(`${option} of limit "${rule.name}" must be a function of the status code`);
    }
  }
  if (rule.countWhen !== undefined && typeof (rule.limiter as RefundableLimiter).refund !== 'function') {
    throw new ConfigError(
      `countWhen of limit "${rule.name}" needs a limiter that can refund (GCRA, token bucket); ${rule.limiter.algorithm.name} cannot`,
    );
  }
  return rule;
}

function checkUniqueNames(rules: readonly { name: string }[]): void {
  const seen = new Set<string>();
  for (const { name } of rules) {
    if (seen.has(name)) throw new ConfigError(`limit names must be unique; "${name}" appears twice`);
    seen.add(name);
  }
}

function checkFailureMode(mode: unknown): FailureMode {
  if (mode === 'open' || mode === 'closed' || mode === 'fallback') return mode;
  throw new ConfigError(`failure must be 'open', 'closed' or 'fallback', got ${String(mode)}`);
}

function compileAllowList(list: readonly string[]): TrustFunction {
  try {
    return proxyaddr.compile([...list]);
  } catch (error) {
    throw new ConfigError(`allowList: ${(error as Error).message}`);
  }
}

import type { Decision, FailureMode, LimitOptions } from '../decision.js';
import type { HttpConfig, NamedRule } from './config.js';
import type { ChargeResult, RefundableLimiter } from './nested.js';
import type { RoutePolicy } from './options.js';
import { type PolicyDenial, policyDenial } from './policy-denial.js';
import { type PolicyHeaders, policyHeaders } from './policy-headers.js';
import { ipKeyPrefix } from './storage-key.js';

/**
 * A route whose request needs none of the general charging: one limit, keyed by client IP, with
 * a constant cost, params and failure mode. It is decided without a Promise when the limiter can
 * answer synchronously (memory `limitSync`; a leased limiter's `tryLimit`, which may still need
 * the remote), else by one awaited `limit` (a Redis limiter).
 */
export interface SyncPlan {
  name: string;
  limiter: RefundableLimiter;
  /** `limitSync` or `tryLimit` bound to the limiter (it answers `undefined` when it cannot decide now); absent when the limiter has neither. */
  decide?: (key: string, options: LimitOptions) => Decision | undefined;
  /** Built once, passed to every call (a limiter does not keep or change it). */
  options: LimitOptions;
  /** The limiter key of a client's `ipKey` (`<name>:ip:<ipKey>`), the last one kept: a hot client's is the same string each request. */
  keyOf: (ipKey: string) => string;
  /** The route's RateLimit headers of a decision, with the policy's strings built once. */
  headers: PolicyHeaders;
  /** The route's 429 of a denial, with its body built once per wait in seconds. */
  denial: PolicyDenial;
}

type SyncDecider = RefundableLimiter & {
  limitSync?: (key: string, options?: LimitOptions) => Decision;
  tryLimit?: (key: string, options?: LimitOptions) => Decision | undefined;
};

/**
 * The plan of a route's rules, or `undefined` when the request needs the general path: several
 * limits (all-or-nothing charging), a user function (skip, key, cost, params) or outcome
 * counting (`countWhen`, `resetWhen`).
 */
export function syncPlanOf<Req>(
  rules: readonly NamedRule<Req>[],
  route: RoutePolicy<Req> | undefined,
  failure: FailureMode | undefined,
  config: Pick<HttpConfig<unknown>, 'draft' | 'legacy' | 'epochClock' | 'problemType'>,
): SyncPlan | undefined {
  if (rules.length !== 1) return undefined;
  const rule = rules[0] as NamedRule<Req>;
  if (rule.skip || rule.key || rule.countWhen || rule.resetWhen || typeof rule.params === 'function') return undefined;
  const cost = constantCost(rule, route?.cost);
  if (cost === undefined) return undefined;
  const limiter = rule.limiter as SyncDecider;
  const decide =
    typeof limiter.limitSync === 'function'
      ? limiter.limitSync.bind(limiter)
      : typeof limiter.tryLimit === 'function'
        ? limiter.tryLimit.bind(limiter)
        : undefined;
  const options: LimitOptions = failure === undefined ? { cost } : { cost, failure };
  if (rule.params !== undefined) options.params = rule.params;
  const algorithm =
    options.params === undefined || limiter.algorithmFor === undefined
      ? limiter.algorithm
      : limiter.algorithmFor(options.params);
  const windowSeconds = Math.max(1, Math.ceil(algorithm.horizonMs / 1000));
  const headers = policyHeaders(rule.name, windowSeconds, config);
  const plan: SyncPlan = {
    name: rule.name,
    limiter,
    options,
    keyOf: lastKeyOf(ipKeyPrefix(rule.name)),
    headers,
    denial: policyDenial(rule.name, config.problemType),
  };
  if (decide !== undefined) plan.decide = decide;
  return plan;
}

function lastKeyOf(prefix: string): (ipKey: string) => string {
  let lastIp: string | undefined;
  let key = '';
  return (ipKey) => {
    if (ipKey !== lastIp) {
      lastIp = ipKey;
      key = prefix + ipKey;
    }
    return key;
  };
}

/** The rule's cost when no function decides it (route first, as `chargesFor` reads it). */
function constantCost<Req>(rule: NamedRule<Req>, costs: RoutePolicy<Req>['cost']): number | undefined {
  if (typeof costs === 'function') return undefined;
  const routeCost = typeof costs === 'number' ? costs : costs?.[rule.name];
  if (routeCost !== undefined) return routeCost;
  return typeof rule.cost === 'function' ? undefined : (rule.cost ?? 1);
}

/** The one charge result of a synchronous decision, shaped as `chargeAll`'s `single` strategy makes it. */
export function syncResult(plan: SyncPlan, key: string, decision: Decision): ChargeResult {
  const { options } = plan;
  const result: ChargeResult = {
    name: plan.name,
    limiter: plan.limiter,
    key,
    cost: options.cost as number,
    decision,
    state: decision.allowed ? 'charged' : 'denied',
  };
  if (options.params !== undefined) result.params = options.params;
  if (options.failure !== undefined) result.failure = options.failure;
  return result;
}

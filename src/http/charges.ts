import type { FailureMode } from '../decision.js';
import type { NamedRule } from './config.js';
import type { Charge } from './nested.js';
import type { CostSpec, RequestInfo } from './options.js';
import { ruleKeyOf } from './storage-key.js';

/**
 * What each rule charges this request: its key (identity, else client IP) and its cost (route
 * first). Rules that do not apply (their `skip` says so, or their key function returns `null`)
 * charge nothing and are left out.
 */
export async function chargesFor<Req>(
  rules: readonly NamedRule<Req>[],
  costs: CostSpec<Req> | undefined,
  info: RequestInfo<Req>,
  failure: FailureMode | undefined,
): Promise<Charge[]> {
  const charges = await Promise.all(rules.map((rule) => chargeOf(rule, costs, info, failure)));
  return charges.includes(undefined) ? charges.filter((charge) => charge !== undefined) : (charges as Charge[]);
}

async function chargeOf<Req>(
  rule: NamedRule<Req>,
  costs: CostSpec<Req> | undefined,
  info: RequestInfo<Req>,
  failure: FailureMode | undefined,
): Promise<Charge | undefined> {
  if (rule.skip && (await rule.skip(info))) return undefined;
  const key = await ruleKeyOf(rule, info);
  if (key === null) return undefined;
  const charge: Charge = { name: rule.name, limiter: rule.limiter, key, cost: await costOf(rule, costs, info) };
  const params = typeof rule.params === 'function' ? await rule.params(info) : rule.params;
  if (params !== undefined) charge.params = params;
  if (failure !== undefined) charge.failure = failure;
  if (rule.countWhen !== undefined) charge.countWhen = rule.countWhen;
  if (rule.resetWhen !== undefined) charge.resetWhen = rule.resetWhen;
  return charge;
}

async function costOf<Req>(rule: NamedRule<Req>, costs: CostSpec<Req> | undefined, info: RequestInfo<Req>) {
  let cost: number | undefined;
  if (typeof costs === 'number') cost = costs;
  else if (typeof costs === 'function') cost = await costs(info, rule.name);
  else if (costs !== undefined) cost = costs[rule.name];
  if (cost === undefined) cost = typeof rule.cost === 'function' ? await rule.cost(info) : (rule.cost ?? 1);
  return cost;
}

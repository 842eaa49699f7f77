import type { Decision } from '../../decision.js';
import type { ReferenceModel } from './types.js';

/**
 * Partial admission over any reference model, in a different formulation from the cores'
 * (`algorithms/partial.ts`, which reads a cost-0 `remaining`): ask for the most units the key
 * could hold, then one fewer, and so on, and take the first request admitted. Denials charge
 * nothing, so the failed asks leave the model as it was. When even one unit is denied, that
 * denial answers, with nothing admitted.
 */
export function decidePartially(model: ReferenceModel, key: string, nowMs: number, cost: number): Decision {
  if (cost === 0) return { ...model.decide(key, nowMs, 0), admitted: 0 };
  let denial: Decision | undefined;
  for (let units = Math.min(cost, model.decide(key, nowMs, 0).limit); units >= 1; units--) {
    const decision = model.decide(key, nowMs, units);
    if (decision.allowed) return { ...decision, admitted: units };
    denial = decision;
  }
  return { ...(denial as Decision), admitted: 0 };
}

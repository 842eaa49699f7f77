import type { Decision } from '../decision.js';

/**
 * A decision of `units` at one instant, applied when `commit` is true: a core's `decide` bound
 * to one key's state and one clock reading.
 */
export type DecideAt = (units: number, commit: boolean) => Decision;

/**
 * Partial admission (redis_rate's `AllowAtMost`): admits as many of `cost` units as the key
 * holds now. Every core's cost-0 `remaining` is exactly the most units it would admit now (the
 * `Algorithm` contract), so this asks for that many, all at one instant: atomic wherever
 * `decide` is. When none is held (and `cost > 0`) it is a denial that charges nothing and
 * waits for one unit, as `AllowAtMost` does. The Redis scripts compose the same three steps
 * in Lua (`decide_partly` in `stores/redis/scripts/compose.ts`).
 */
export function admitPartially(cost: number, decide: DecideAt): Decision {
  const admitted = Math.min(cost, decide(0, false).remaining);
  const { allowed, limit, remaining, retryAfterMs, resetAfterMs } =
    admitted === 0 && cost > 0 ? decide(1, false) : decide(admitted, true);
  // A literal, not a spread: spreading a decision cost ~6× this whole function (V8, Node 20).
  return { allowed, limit, remaining, retryAfterMs, resetAfterMs, admitted };
}

/**
 * A penalty as far as the limit: spends as many of `units` as the key holds now, at one
 * instant, as a partial admission would but without asking. The sliding windows' `penalty`;
 * their Lua twins compose the same two steps (`stores/redis/scripts/admin.ts`).
 */
export function spendHeld(units: number, decide: DecideAt): void {
  const held = Math.min(units, decide(0, false).remaining);
  if (held > 0) decide(held, true);
}

/*
 * Integer division that stays exact for operands up to 2^53. `Math.floor(a / b)` can round
 * up when a / b is within one ulp below an integer (large b, e.g. 1 per 24 h in µs); the
 * correction step makes the result exact. The Lua scripts carry the same two helpers, so
 * memory and Redis agree to the unit.
 */

/** ⌊a / b⌋ for integers, b > 0. */
export function floorDiv(a: number, b: number): number {
  const q = Math.floor(a / b);
  return q * b > a ? q - 1 : q;
}

/**
 * ⌈a / b⌉ for integers, b > 0. Not `-floorDiv(-a, b)`: for a = 0 that is −0 − (−0), a heap
 * number where V8 expects a small integer, and one stored in a decision makes V8 box the numbers
 * of every later decision.
 */
export function ceilDiv(a: number, b: number): number {
  const q = Math.ceil(a / b);
  return q * b < a ? q + 1 : q;
}

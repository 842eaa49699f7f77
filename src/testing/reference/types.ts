import type { Decision } from '../../decision.js';

/**
 * A slow, obviously correct model of an algorithm, written in a different formulation from the
 * core it checks, holding its own per-key state. Property tests replay random schedules
 * against a model and a real limiter and require identical decisions.
 */
export interface ReferenceModel {
  /**
   * `limit`, when given, is this call's limit (per-call params of the same period, see
   * `AlgorithmProfile.paramsOf`): the key's state, written under earlier calls' limits, is read
   * under it as docs/algorithms.md defines ("Parameters that change on a live key").
   */
  decide(key: string, nowMs: number, cost: number, limit?: number): Decision;
  /**
   * Gives `units` back to `key` at `nowMs`, as `Limiter.refund` (models of algorithms that take
   * refunds only): never below an unused key.
   */
  refund?(key: string, nowMs: number, units: number): void;
  /**
   * Charges `units` to `key` at `nowMs` unconditionally, as `Limiter.charge`: debt past the
   * limit that later admissions wait out.
   */
  charge?(key: string, nowMs: number, units: number): void;
}

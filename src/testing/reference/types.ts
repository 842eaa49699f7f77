import type { Decision } from '../../decision.js';

/**
 * A slow, obviously correct model of an algorithm, written in a different formulation from the
 * core it checks, holding its own per-key state. Property tests replay random schedules
 * against a model and a real limiter and require identical decisions.
 */
export interface ReferenceModel {
  decide(key: string, nowMs: number, cost: number): Decision;
}

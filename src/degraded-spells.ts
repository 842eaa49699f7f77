import type { DegradedReason } from './decision.js';
import type { Clock } from './limiter.js';

/**
 * A change between degraded and ordinary decisions: one event when the first degraded decision
 * follows ordinary ones, one when the first ordinary decision follows degraded ones, never one
 * per decision. `Reason` is what the layer that tells it knows of the cause.
 */
export type DegradedTransition<Reason = DegradedReason | undefined> =
  | {
      /** Decisions began to be degraded. */
      state: 'degraded';
      /** The first degraded decision's reason. */
      reason: Reason;
    }
  | {
      /** Decisions are ordinary again. */
      state: 'recovered';
      /** The reason of the first degraded decision of the spell. */
      reason: Reason;
      /** Degraded decisions between the two transitions. */
      degradedDecisions: number;
      /** Milliseconds from the first degraded decision to the first ordinary one. */
      durationMs: number;
    };

/** Follows a stream of decisions as degraded or ordinary, and names the transitions. */
export interface DegradedSpells<Reason> {
  /** Records one decision; returns the transition it makes, if any. */
  observe(degraded: boolean, reason: Reason): DegradedTransition<Reason> | undefined;
  /**
   * True while the last decision observed was degraded. A method, not a getter: a getter in an
   * object literal puts the object in V8's dictionary mode, where every decision's `observe` is a
   * hash lookup.
   */
  active(): boolean;
}

/**
 * A degraded spell tracker (shared by `sluice/otel` and the HTTP layer), so that logging a
 * degradation takes two lines however many decisions it lasts.
 */
export function createDegradedSpells<Reason>(clock: Clock): DegradedSpells<Reason> {
  let spell: { reason: Reason; startedAtMs: number; decisions: number } | undefined;
  return {
    active: () => spell !== undefined,
    observe(degraded, reason) {
      if (degraded) {
        if (spell) {
          spell.decisions++;
          return undefined;
        }
        spell = { reason, startedAtMs: clock(), decisions: 1 };
        return { state: 'degraded', reason };
      }
      if (!spell) return undefined;
      const ended = spell;
      spell = undefined;
      return {
        state: 'recovered',
        reason: ended.reason,
        degradedDecisions: ended.decisions,
        durationMs: clock() - ended.startedAtMs,
      };
    },
  };
}

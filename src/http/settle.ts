import type { ChargeRecord } from '../charge.js';
import { type ChargeResult, recordOf } from './nested.js';

/**
 * What an adapter calls once the response is over: its final status code, or `undefined` when
 * it never completed (the client disconnected first). Never rejects.
 */
export type Settle = (status: number | undefined) => Promise<void>;

/**
 * The after-response step of an admitted request whose limits count by outcome, or `undefined`
 * when none does (no closure on the common path). Per limit that was charged: `resetWhen(status)`
 * resets the key; else `countWhen(status) === false` gives back what of the charge still stands
 * (after a reservation settled it: its settled units, debt included; nothing when the settle
 * gave it all back). A response that never completed keeps every charge: the handler ran, and
 * a client must not dodge a failed-login count by hanging up before the answer. Degraded
 * decisions (a failure policy answered) are left alone: no store holds their units.
 */
export function settlerOf(
  results: readonly ChargeResult[],
  onError: (error: unknown, result: ChargeResult) => void,
): Settle | undefined {
  if (!results.some(countsByOutcome)) return undefined;
  return async (status) => {
    if (status === undefined) return;
    await Promise.all(results.map((result) => settleOne(result, status).catch((error) => onError(error, result))));
  };
}

function countsByOutcome(result: ChargeResult): boolean {
  return result.countWhen !== undefined || result.resetWhen !== undefined;
}

async function settleOne(result: ChargeResult, status: number): Promise<void> {
  if (result.state !== 'charged' || result.decision.degraded) return;
  const record = recordOf(result) as ChargeRecord;
  if (result.resetWhen?.(status)) return record.resetKey();
  if (result.countWhen?.(status) === false) await record.giveBack();
}

import type { AlgorithmParams } from '../algorithms/types.js';
import { ChargeRecord } from '../charge.js';
import type { Decision, FailureMode, LimitOptions, ParamsOptions } from '../decision.js';
import type { Limiter } from '../limiter.js';

/**
 * A limiter as the HTTP layer calls it: one whose algorithm can undo a charge exactly (GCRA,
 * token bucket) may implement `refund`; nested limits are then charged in parallel and refunded
 * on denial instead of being read first. Every {@link Limiter} is one.
 */
export type RefundableLimiter = Limiter & {
  refund?(key: string, units: number, options?: ParamsOptions): Promise<unknown>;
};

/** One limit applied to one request. */
export interface Charge {
  name: string;
  limiter: RefundableLimiter;
  key: string;
  cost: number;
  /** The rule's numbers for this request, passed as `{ params }`; absent: the limiter's own. */
  params?: AlgorithmParams;
  /** The route's failure policy, passed to the limiter as `{ failure }`; absent: the limiter's own. */
  failure?: FailureMode;
  /** Which responses keep the charge (the rule's `countWhen`); absent: every response. */
  countWhen?: (status: number) => boolean;
  /** Which responses reset the key (the rule's `resetWhen`). */
  resetWhen?: (status: number) => boolean;
}

/**
 * What happened to one limit: `charged` (spent `cost`), `denied` (spent nothing),
 * `refunded` (spent, then given back because another limit denied), `read` (never charged,
 * because another limit denied first: the decision is a cost-0 read of the key's state).
 */
export type ChargeState = 'charged' | 'denied' | 'refunded' | 'read';

/** One limit's outcome: the charge, the limiter's decision for it, and what was finally spent. */
export interface ChargeResult extends Charge {
  /** For `read` results, a cost-0 decision: the key's state, nothing spent. */
  decision: Decision;
  state: ChargeState;
  /**
   * The one record every give-back and debt of an admitted charge goes through, made when the
   * first one is asked for (a request that gives nothing back allocates none): `record.standing`
   * is the units of the charge the store still holds. Absent, an admitted charge stands whole
   * (`cost`; nothing for a decision a failure policy made without the store).
   */
  record?: ChargeRecord;
}

/** How the limits of one request were charged (see {@link chargeAll}). */
export type ChargeStrategy = 'single' | 'refund' | 'check-first';

/** The result of charging every limit of one request. */
export interface ChargeOutcome {
  /** True only when every limit admitted its cost. */
  allowed: boolean;
  strategy: ChargeStrategy;
  /** One result per charge, in the order given. */
  results: ChargeResult[];
}

/**
 * Charges every limit of one request, all or nothing: a request denied by any limit should be
 * charged by none. What holds depends on the limiters:
 *
 * - one limit (`single`): one atomic `limit` call; exact.
 * - every limiter has `refund` (`refund`): all `limit` calls run in parallel (one round trip);
 *   when any denies, the admitted ones are refunded and re-read (two more, on denials only). A
 *   denied request ends up charged by none, but between the charge and the refund a concurrent
 *   request can see the lower budget and be denied too (over-denial for a round trip or two,
 *   never over-admission).
 * - otherwise (`check-first`): every key's state is read in parallel (a cost-0 `limit` call,
 *   which spends nothing), then the limits are charged one at a time: those the reads predict
 *   will deny first, then refundable ones, then the tightest; the first denial stops the chain
 *   and refunds what it can. A denied request is charged by none unless another request spends
 *   from the same keys between the read and the charge; in that race it stays charged by the
 *   non-refundable limits charged before the one that denied. 1 + k round trips for k limits.
 *
 * Each charge is an atomic `limit` call, so no limit ever admits beyond its budget.
 *
 * A rejected call (e.g. `StoreUnavailableError`) refunds what was charged where it can, then
 * rejects with that error. `onRefundError` hears refunds that failed (those units stay spent).
 */
export async function chargeAll(
  charges: readonly Charge[],
  onRefundError: (error: unknown, charge: Charge) => void,
): Promise<ChargeOutcome> {
  if (charges.length === 1) {
    const charge = charges[0] as Charge;
    const decision = await charge.limiter.limit(charge.key, callOptions(charge));
    return { allowed: decision.allowed, strategy: 'single', results: [resultOf(charge, decision)] };
  }
  if (charges.every((charge) => typeof charge.limiter.refund === 'function')) {
    return chargeThenRefund(charges, onRefundError);
  }
  return checkFirst(charges, onRefundError);
}

async function chargeThenRefund(
  charges: readonly Charge[],
  onRefundError: (error: unknown, charge: Charge) => void,
): Promise<ChargeOutcome> {
  const settled = await Promise.allSettled(charges.map((c) => c.limiter.limit(c.key, callOptions(c))));
  const results: ChargeResult[] = [];
  const failures: unknown[] = [];
  settled.forEach((outcome, index) => {
    const charge = charges[index] as Charge;
    if (outcome.status === 'rejected') failures.push(outcome.reason);
    else results.push(resultOf(charge, outcome.value));
  });
  const allowed = failures.length === 0 && results.every((result) => result.decision.allowed);
  if (!allowed) await refundCharged(results, onRefundError);
  if (failures.length > 0) throw failures[0];
  return { allowed, strategy: 'refund', results };
}

async function checkFirst(
  charges: readonly Charge[],
  onRefundError: (error: unknown, charge: Charge) => void,
): Promise<ChargeOutcome> {
  const reads = await Promise.all(charges.map(read));
  const results: ChargeResult[] = charges.map((charge, index) => ({
    ...charge,
    decision: reads[index] as Decision,
    state: 'read',
  }));
  const rank = (index: number): [number, number, number] => {
    const slack = (reads[index] as Decision).remaining - (charges[index] as Charge).cost;
    return [slack < 0 ? 0 : 1, typeof (charges[index] as Charge).limiter.refund === 'function' ? 0 : 1, slack];
  };
  const order = charges.map((_, index) => index).sort((a, b) => compareTuples(rank(a), rank(b)));
  for (const index of order) {
    const result = results[index] as ChargeResult;
    let decision: Decision;
    try {
      decision = await result.limiter.limit(result.key, callOptions(result));
    } catch (error) {
      await refundCharged(results, onRefundError);
      throw error;
    }
    result.decision = decision;
    result.state = decision.allowed ? 'charged' : 'denied';
    if (!decision.allowed) {
      await refundCharged(results, onRefundError);
      return { allowed: false, strategy: 'check-first', results };
    }
  }
  return { allowed: true, strategy: 'check-first', results };
}

function resultOf(charge: Charge, decision: Decision): ChargeResult {
  return { ...charge, decision, state: decision.allowed ? 'charged' : 'denied' };
}

/**
 * The record of an admitted charge (`charged`, or `refunded` after a nested denial), made on
 * first use; `undefined` for a charge that was not admitted.
 */
export function recordOf(result: ChargeResult): ChargeRecord | undefined {
  if (result.record !== undefined || (result.state !== 'charged' && result.state !== 'refunded')) return result.record;
  const stored = result.decision.degraded !== true;
  result.record = new ChargeRecord(result.limiter, result.key, result.cost, result.params, result.failure, stored);
  return result.record;
}

/** Gives back every charged result whose limiter can refund (through its record), then reads its state again. */
async function refundCharged(
  results: ChargeResult[],
  onRefundError: (error: unknown, charge: Charge) => void,
): Promise<void> {
  await Promise.all(
    results.map(async (result) => {
      if (result.state !== 'charged' || result.cost === 0 || typeof result.limiter.refund !== 'function') return;
      try {
        await recordOf(result)?.giveBack();
      } catch (error) {
        onRefundError(error, result);
        return;
      }
      result.state = 'refunded';
      result.decision = await read(result).catch(() => ({
        ...result.decision,
        remaining: Math.min(result.decision.limit, result.decision.remaining + result.cost),
      }));
    }),
  );
}

function callOptions(charge: Charge, cost = charge.cost): LimitOptions {
  const options: LimitOptions = charge.failure ? { cost, failure: charge.failure } : { cost };
  if (charge.params !== undefined) options.params = charge.params;
  return options;
}

/**
 * The key's state now, spending nothing: a cost-0 `limit` call. Unlike `peek`, which answers
 * for one hypothetical unit, its `resetAfterMs` is the key's own.
 */
function read(charge: Charge): Promise<Decision> {
  return charge.limiter.limit(charge.key, callOptions(charge, 0));
}

function compareTuples(a: readonly number[], b: readonly number[]): number {
  for (let index = 0; index < a.length; index++) {
    const difference = (a[index] as number) - (b[index] as number);
    if (difference !== 0) return difference;
  }
  return 0;
}

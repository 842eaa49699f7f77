import type { FailureMode } from '../decision.js';
import { ConfigError, isSluiceError } from '../errors.js';
import type { Verdict } from './core.js';
import { checkPolicyName, retryAfterHeader } from './headers.js';
import { type ChargeResult, recordOf } from './nested.js';
import type { DeniedOutcome, LimitRule, RequestInfo } from './options.js';
import { problem } from './response.js';
import { ruleKeyOf } from './storage-key.js';

/** A hold on one in-flight slot, as `sluice/concurrency`'s `acquire` grants it. */
export interface InFlightHold {
  release(): Promise<void>;
}

/**
 * What an in-flight cap calls: `createConcurrencyLimiter` from `sluice/concurrency` is one.
 * Structural, so the HTTP layer imports no store.
 */
export interface InFlightLimiter {
  acquire(
    key: string,
  ): Promise<
    | { readonly allowed: true; readonly hold: InFlightHold }
    | { readonly allowed: false; readonly limit: number; readonly retryAfterMs: number }
  >;
}

/**
 * A cap on a key's requests in flight, beside the rate limits (option `inFlight`): a request
 * takes a hold once every rate limit admitted it, and releases it when its response is over,
 * however it ended (finished, failed, or the client disconnected).
 */
export interface InFlightRule<Req> {
  /** Names the cap in problem responses and prefixes its keys (`<name>:<key>`). Default `in-flight`. */
  name?: string;
  /** Holds the slots, e.g. `createConcurrencyLimiter({ limit: 5, holdMs: 30_000, store })`. */
  limiter: InFlightLimiter;
  /**
   * The identity capped, as a limit rule's `key`: `undefined` or `''` is the client IP, `null`
   * exempts the request, any other non-string fails it with `InvalidKeyError`.
   */
  key?: LimitRule<Req>['key'];
}

type Cap<Req> = InFlightRule<Req> & { name: string };

/**
 * The `inFlight` option, checked at construction.
 * @throws {ConfigError} when a cap's limiter has no `acquire`, its key is not a function, or names repeat.
 */
export function inFlightCaps<Req>(option: InFlightRule<Req> | readonly InFlightRule<Req>[]): Cap<Req>[] {
  const list: readonly InFlightRule<Req>[] = Array.isArray(option) ? option : [option as InFlightRule<Req>];
  const names = new Set<string>();
  return list.map((cap) => {
    if (typeof cap?.limiter?.acquire !== 'function') {
      throw new ConfigError('inFlight: every cap needs a limiter with acquire(), e.g. createConcurrencyLimiter');
    }
    if (cap.key !== undefined && typeof cap.key !== 'function')
      throw new ConfigError('inFlight: key must be a function');
    const name = checkPolicyName(cap.name ?? 'in-flight');
    if (names.has(name)) throw new ConfigError(`inFlight: names must be unique; "${name}" appears twice`);
    names.add(name);
    return { ...cap, name };
  });
}

/** What the core lends the in-flight step. */
export interface InFlightContext<Req> {
  mode: FailureMode | undefined;
  problemType: string;
  respond(outcome: DeniedOutcome, info: RequestInfo<Req>): Promise<Verdict>;
  onStoreError?: (error: unknown, info: RequestInfo<Req>) => void;
  /** A release or refund that failed (the hold then expires after its `holdMs`; refunded units stay spent). */
  onGiveBackError(error: unknown, what: { name: string }): void;
  onFailOpen(error: unknown): void;
}

type Refusal = { cap: string; limit: number; retryAfterMs: number } | { cap: string; error: unknown };

/**
 * Takes every cap's hold for a request its rate limits admitted (`verdict`, charged as
 * `results`), all or nothing: when a cap is full, the holds taken are released and the rate
 * units given back (through `refund`, where the limiter has it), and the request is refused
 * with 429. A cap whose store fails refuses with 503, or is passed over when the route fails
 * open. Admitted: the verdict's `settle` now also releases the holds, on any outcome.
 */
export async function holdInFlight<Req>(
  caps: readonly Cap<Req>[],
  verdict: Extract<Verdict, { action: 'continue' }>,
  results: readonly ChargeResult[],
  info: RequestInfo<Req>,
  context: InFlightContext<Req>,
): Promise<Verdict> {
  const holds: InFlightHold[] = [];
  let refusal: Refusal | undefined;
  await Promise.all(
    caps.map(async (cap) => {
      const key = await ruleKeyOf(cap, info);
      if (key === null) return;
      try {
        const answer = await cap.limiter.acquire(key);
        if (answer.allowed) holds.push(answer.hold);
        else refusal ??= { cap: cap.name, limit: answer.limit, retryAfterMs: answer.retryAfterMs };
      } catch (error) {
        if (!isSluiceError(error, 'ERR_SLUICE_STORE_UNAVAILABLE')) throw error;
        context.onStoreError?.(error, info);
        if ((context.mode ?? 'closed') === 'open') context.onFailOpen(error);
        else refusal ??= { cap: cap.name, error };
      }
    }),
  ).catch(async (error) => {
    await release(holds, context);
    throw error;
  });
  if (refusal === undefined) return { ...verdict, settle: settlerWith(holds, verdict.settle, context) };
  await Promise.all([release(holds, context), giveBack(results, context)]);
  return context.respond(refused(refusal, results, context.problemType), info);
}

function settlerWith<Req>(
  holds: readonly InFlightHold[],
  settle: ((status: number | undefined) => Promise<void>) | undefined,
  context: InFlightContext<Req>,
) {
  if (holds.length === 0) return settle;
  return async (status: number | undefined) => {
    await Promise.all([release(holds, context), settle?.(status)]);
  };
}

async function release<Req>(holds: readonly InFlightHold[], context: InFlightContext<Req>): Promise<void> {
  await Promise.all(
    holds.map((hold) => hold.release().catch((error) => context.onGiveBackError(error, { name: 'in-flight hold' }))),
  );
}

/**
 * Gives back what the rate limits charged this request, through each charge's record: all of
 * it, under the request's own numbers (exact for GCRA and token bucket; where the limiter takes
 * no refunds the units stay spent).
 */
async function giveBack<Req>(results: readonly ChargeResult[], context: InFlightContext<Req>): Promise<void> {
  await Promise.all(
    results.map((result) =>
      recordOf(result)
        ?.giveBack()
        .catch((error) => context.onGiveBackError(error, result)),
    ),
  );
}

function refused(refusal: Refusal, results: readonly ChargeResult[], problemType: string): DeniedOutcome {
  if ('error' in refusal) {
    const detail = `The in-flight cap "${refusal.cap}" could not decide (store-unavailable).`;
    return {
      status: 503,
      limits: [...results],
      headers: [],
      problem: problem(problemType, 503, detail, { limit: refusal.cap, reason: 'store-unavailable' }),
    };
  }
  const header = retryAfterHeader(refusal.retryAfterMs);
  const detail = `At most ${refusal.limit} requests may be in flight at once under "${refusal.cap}".`;
  return {
    status: 429,
    limits: [...results],
    headers: [header],
    problem: problem(problemType, 429, detail, { limit: refusal.cap, retryAfter: Number(header[1]) }),
  };
}

import type { HttpConfig } from './config.js';
import {
  draftWriters,
  type HeaderPair,
  type LimitReport,
  legacyHeaders,
  retryAfterHeader,
  retryAfterSeconds,
} from './headers.js';
import type { ChargeResult } from './nested.js';
import type { DeniedOutcome } from './options.js';
import { problem } from './response.js';

/**
 * The RateLimit headers of a request's limits, from their decisions (never from key TTLs).
 * None when a decision is degraded: a failure policy's numbers describe no real budget.
 */
export function rateLimitHeaders(
  results: readonly ChargeResult[],
  config: Pick<HttpConfig<unknown>, 'draft' | 'legacy' | 'headerLimits' | 'epochClock'>,
): HeaderPair[] {
  if (results.some((result) => result.decision.degraded)) return [];
  const reports = results.map(toReport);
  const closest = closestToDenial(reports, results);
  const pairs: HeaderPair[] = [];
  if (config.draft !== false) {
    pairs.push(...draftWriters[config.draft](config.headerLimits === 'closest' ? [closest] : reports, closest));
  }
  if (config.legacy !== false) pairs.push(...legacyHeaders(closest, config.legacy, config.epochClock()));
  return pairs;
}

/**
 * Why a request that some limit denied is refused: 503 when a fail-closed policy denied without
 * the store, 413 when the cost can never be admitted, else 429 with `Retry-After` = the longest
 * wait among the denying limits (each must admit before the request can), rounded up to seconds.
 */
export function denial(results: readonly ChargeResult[], headers: HeaderPair[], problemType: string): DeniedOutcome {
  const denied = results.filter((result) => result.state === 'denied');
  const degraded = denied.find((result) => result.decision.degraded && result.decision.failure !== 'fallback');
  if (degraded) {
    const waitMs = degraded.decision.retryAfterMs;
    const reason = degraded.decision.degradedReason ?? 'store-unavailable';
    const detail = `The rate limiter could not decide for limit "${degraded.name}" (${reason}).`;
    return {
      status: 503,
      limits: results,
      headers: Number.isFinite(waitMs) && waitMs > 0 ? [retryAfterHeader(waitMs)] : [],
      problem: problem(problemType, 503, detail, { limit: degraded.name, reason }),
    };
  }
  const longest = denied.reduce((a, b) => (b.decision.retryAfterMs > a.decision.retryAfterMs ? b : a));
  const waitMs = longest.decision.retryAfterMs;
  if (!Number.isFinite(waitMs)) {
    const detail = `This request costs ${longest.cost} units; limit "${longest.name}" holds at most ${longest.decision.limit}, so it can never be admitted.`;
    return {
      status: 413,
      limits: results,
      headers,
      problem: problem(problemType, 413, detail, { limit: longest.name }),
    };
  }
  return {
    status: 429,
    limits: results,
    headers: [...headers, retryAfterHeader(waitMs)],
    problem: tooManyRequests(problemType, longest.name, retryAfterSeconds(waitMs)),
  };
}

/** The problem of a 429: limit `name` denied and admits again in `seconds` whole seconds. */
export function tooManyRequests(problemType: string, name: string, seconds: number) {
  return problem(problemType, 429, `Rate limit "${name}" exceeded; retry in ${seconds} s.`, {
    limit: name,
    retryAfter: seconds,
  });
}

/** The 503 of a route that fails closed when the store threw. */
export function storeDown(problemType: string, error: unknown): DeniedOutcome {
  const detail = "The rate limiter's store is unavailable and this route fails closed.";
  return {
    status: 503,
    limits: [],
    headers: [],
    problem: problem(problemType, 503, detail, { reason: 'store-unavailable' }),
    error,
  };
}

/** The algorithm that decided a charge: the limiter's, or the one its params made. */
function algorithmOf(result: ChargeResult) {
  const { limiter, params } = result;
  return params === undefined || limiter.algorithmFor === undefined ? limiter.algorithm : limiter.algorithmFor(params);
}

function toReport(result: ChargeResult): LimitReport {
  const { decision } = result;
  return {
    name: result.name,
    quota: decision.limit,
    windowSeconds: Math.max(1, Math.ceil(algorithmOf(result).horizonMs / 1000)),
    remaining: decision.remaining,
    resetSeconds: Math.ceil(decision.resetAfterMs / 1000),
    resetAfterMs: decision.resetAfterMs,
  };
}

/** The denied limit with the longest wait, or else the one with the fewest units left (then the latest reset). */
function closestToDenial(reports: readonly LimitReport[], results: readonly ChargeResult[]): LimitReport {
  let best = 0;
  for (let index = 1; index < reports.length; index++) {
    const [a, b] = [results[best] as ChargeResult, results[index] as ChargeResult];
    const [ra, rb] = [reports[best] as LimitReport, reports[index] as LimitReport];
    const aDenied = a.state === 'denied';
    if (aDenied !== (b.state === 'denied')) {
      if (!aDenied) best = index;
    } else if (aDenied) {
      if (b.decision.retryAfterMs > a.decision.retryAfterMs) best = index;
    } else if (rb.remaining < ra.remaining || (rb.remaining === ra.remaining && rb.resetAfterMs > ra.resetAfterMs)) {
      best = index;
    }
  }
  return reports[best] as LimitReport;
}

import type { Decision } from '../decision.js';
import { type HeaderPair, retryAfterSeconds } from './headers.js';
import { type HttpResponse, PROBLEM_CONTENT_TYPE } from './response.js';
import { tooManyRequests } from './verdict.js';

/**
 * The 429 of one limit's denial, given the decision's RateLimit headers (which it extends), or
 * `undefined` when the denial is not a plain 429 (a degraded decision, or a cost that never fits).
 */
export type PolicyDenial = (decision: Decision, headers: HeaderPair[]) => HttpResponse | undefined;

/**
 * The denials of a limit whose name never changes (a synchronous plan), as `denial` and
 * `problemResponse` write them: the problem+json body and the `Retry-After` pair depend on the
 * request only through the wait in whole seconds, so they are built again only when it changes.
 */
export function policyDenial(name: string, problemType: string): PolicyDenial {
  let seconds = Number.NaN;
  let retryAfter: HeaderPair = ['Retry-After', ''];
  let body = '';
  return (decision, headers) => {
    const waitMs = decision.retryAfterMs;
    if (decision.degraded || !Number.isFinite(waitMs)) return undefined;
    const wait = retryAfterSeconds(waitMs);
    if (wait !== seconds) {
      seconds = wait;
      retryAfter = ['Retry-After', String(wait)];
      body = JSON.stringify(tooManyRequests(problemType, name, wait));
    }
    headers.push(retryAfter, PROBLEM_CONTENT_TYPE);
    return { status: 429, headers, body };
  };
}

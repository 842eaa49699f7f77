import type { Decision } from '../decision.js';
import type { HttpConfig } from './config.js';
import { type HeaderPair, sfString } from './headers.js';

/** Writes the RateLimit headers of one limit's decision. */
export type PolicyHeaders = (decision: Decision) => HeaderPair[];

/**
 * The headers `rateLimitHeaders` writes for a request with one limit, for a limit whose name and
 * window never change (a synchronous plan): the quoted name and the `RateLimit-Policy` value are
 * built once (again only if the decision's quota changes), the per-request values by
 * concatenation. `windowSeconds` is the algorithm's horizon rounded up, at least 1.
 */
export function policyHeaders(
  name: string,
  windowSeconds: number,
  config: Pick<HttpConfig<unknown>, 'draft' | 'legacy' | 'epochClock'>,
): PolicyHeaders {
  const { draft, legacy, epochClock } = config;
  const quoted = sfString(name);
  let quota = Number.NaN;
  let policy = '';
  const policyOf = (limit: number) => {
    if (limit !== quota) {
      quota = limit;
      policy = draft === 'draft-11' ? `${quoted};q=${limit};w=${windowSeconds}` : `${limit};w=${windowSeconds}`;
    }
    return policy;
  };
  // A denied key's numbers stay put for a second at a time: its RateLimit value is reused.
  let left = Number.NaN;
  let reset = Number.NaN;
  let state = '';
  const stateOf = (remaining: number, resetSeconds: number) => {
    if (remaining !== left || resetSeconds !== reset) {
      left = remaining;
      reset = resetSeconds;
      state = `${quoted};r=${remaining};t=${resetSeconds}`;
    }
    return state;
  };
  return (decision) => {
    if (decision.degraded) return [];
    const { limit, remaining, resetAfterMs } = decision;
    const resetSeconds = Math.ceil(resetAfterMs / 1000);
    const pairs: HeaderPair[] = [];
    if (draft === 'draft-11') {
      pairs.push(['RateLimit-Policy', policyOf(limit)], ['RateLimit', stateOf(remaining, resetSeconds)]);
    } else if (draft === 'draft-7') {
      pairs.push(
        ['RateLimit-Policy', policyOf(limit)],
        ['RateLimit', `limit=${limit}, remaining=${remaining}, reset=${resetSeconds}`],
      );
    } else if (draft === 'draft-6') {
      pairs.push(
        ['RateLimit-Policy', policyOf(limit)],
        ['RateLimit-Limit', String(limit)],
        ['RateLimit-Remaining', String(remaining)],
        ['RateLimit-Reset', String(resetSeconds)],
      );
    }
    if (legacy !== false) {
      const reset = legacy === 'epoch' ? Math.ceil((epochClock() + resetAfterMs) / 1000) : resetSeconds;
      pairs.push(
        ['X-RateLimit-Limit', String(limit)],
        ['X-RateLimit-Remaining', String(remaining)],
        ['X-RateLimit-Reset', String(reset)],
      );
    }
    return pairs;
  };
}

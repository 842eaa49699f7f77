import type { HeaderPair } from './headers.js';

/** A complete response for an adapter to write. */
export interface HttpResponse {
  status: number;
  headers: HeaderPair[];
  body: string;
}

/**
 * An RFC 9457 problem details object. `type` is `about:blank` unless configured, so `title`
 * is the status phrase; Sluice adds the extension members `limit`, `retryAfter` (seconds) and
 * `reason` where they apply.
 */
export interface ProblemDetails {
  type: string;
  title: string;
  status: number;
  detail: string;
  /** The limit that denied (the one with the longest wait when several did). */
  limit?: string;
  /** Whole seconds until the request would be admitted, as in `Retry-After`. */
  retryAfter?: number;
  /** Why the limiter could not decide normally, e.g. `store-unavailable` (503 only). */
  reason?: string;
}

const titles: Record<number, string> = {
  413: 'Content Too Large',
  429: 'Too Many Requests',
  503: 'Service Unavailable',
};

/** Builds the problem object of a denial. */
export function problem(
  type: string,
  status: 413 | 429 | 503,
  detail: string,
  extensions: Pick<ProblemDetails, 'limit' | 'retryAfter' | 'reason'>,
): ProblemDetails {
  return { type, title: titles[status] as string, status, detail, ...extensions };
}

/** The `Content-Type` of every problem response. */
export const PROBLEM_CONTENT_TYPE: HeaderPair = ['Content-Type', 'application/problem+json'];

/** A problem as an `application/problem+json` response carrying `headers`. */
export function problemResponse(details: ProblemDetails, headers: readonly HeaderPair[]): HttpResponse {
  return {
    status: details.status,
    headers: [...headers, PROBLEM_CONTENT_TYPE],
    body: JSON.stringify(details),
  };
}

import type { Limiter } from '../limiter.js';
import { type OptionNames, requireOptions } from '../validate.js';
import { type Acquirer, createAcquirer } from './acquirer.js';
import { learnFromUpstream, type UpstreamResponse } from './upstream.js';

/** Options of {@link throttle}; each function option receives the call's arguments. */
export interface ThrottleOptions<A extends unknown[], R> {
  /** Where calls wait: an {@link Acquirer}, or a limiter (which then gets one default acquirer per process). */
  limiter: Acquirer | Limiter;
  /** The key every call acquires from (e.g. the upstream's name), or a function of the arguments. */
  key: string | ((...args: A) => string);
  /** Units per call (default 1), or a function of the arguments. */
  cost?: number | ((...args: A) => number);
  /** Longest wait (ms) for a call's units; see {@link Acquirer.acquire}. */
  maxWaitMs?: number;
  /** The call's `AbortSignal`, e.g. from a `fetch` init among the arguments. */
  signal?: (...args: A) => AbortSignal | undefined;
  /**
   * The upstream's response within the result (a `fetch` `Response` is one as it is): its 429s,
   * `Retry-After` and RateLimit headers then pause the key fleet-wide and lower its rate. A
   * mapper that throws, or a response without `headers` (its status still counts), never
   * replaces the call's result.
   */
  response?: (result: R) => UpstreamResponse | undefined;
  /**
   * The upstream's response carried by an error the function throws, for clients that throw on
   * a 429 with the response attached (axios's or got's `error.response`): learned from as
   * `response` is, then the error is rethrown unchanged. Return `undefined` for other errors.
   * A mapper that throws is ignored: the function's own error is what the caller gets.
   */
  errorResponse?: (error: unknown) => UpstreamResponse | undefined;
}

const defaultAcquirers = new WeakMap<Limiter, Acquirer>();

function acquirerOf(limiter: Acquirer | Limiter): Acquirer {
  if ('acquire' in limiter) return limiter;
  let acquirer = defaultAcquirers.get(limiter);
  if (acquirer === undefined) {
    acquirer = createAcquirer(limiter);
    defaultAcquirers.set(limiter, acquirer);
  }
  return acquirer;
}

const THROTTLE_OPTION_NAMES: OptionNames<ThrottleOptions<unknown[], unknown>> = {
  limiter: true,
  key: true,
  cost: true,
  maxWaitMs: true,
  signal: true,
  response: true,
  errorResponse: true,
};

/**
 * Wraps an async function so every call first acquires its units (waiting, with the same
 * cancellation, deadline and errors as {@link Acquirer.acquire}), then runs. The wrapper has
 * the function's own parameter and result types.
 *
 * @example
 * ```ts
 * import { createMemoryLimiter, gcra } from 'sluice';
 * import { createAcquirer, throttle } from 'sluice/outbound';
 *
 * const limiter = createMemoryLimiter({ algorithm: gcra({ limit: 10, periodMs: 1000, burst: 5 }) });
 * const getJson = throttle((url: string, init?: RequestInit) => fetch(url, init), {
 *   limiter: createAcquirer(limiter, { pace: true }),
 *   key: 'partner-api',
 *   signal: (_url, init) => init?.signal ?? undefined,
 *   response: (res) => res,
 * });
 * const res: Response = await getJson('http://127.0.0.1:8080/items', {});
 * ```
 */
export function throttle<A extends unknown[], R>(
  fn: (...args: A) => Promise<R>,
  options: ThrottleOptions<A, R>,
): (...args: A) => Promise<R> {
  requireOptions('throttle options', options, THROTTLE_OPTION_NAMES);
  const acquirer = acquirerOf(options.limiter);
  const { key, cost, maxWaitMs, signal, response, errorResponse } = options;
  return async (...args: A): Promise<R> => {
    const callKey = typeof key === 'function' ? key(...args) : key;
    await acquirer.acquire(callKey, {
      cost: typeof cost === 'function' ? cost(...args) : cost,
      maxWaitMs,
      signal: signal?.(...args),
    });
    let result: R;
    try {
      result = await fn(...args);
    } catch (error) {
      if (errorResponse !== undefined) learnFrom(acquirer, callKey, errorResponse, error);
      throw error;
    }
    if (response !== undefined) learnFrom(acquirer, callKey, response, result);
    return result;
  };
}

/**
 * Learns from the response `map` finds in the call's result or error. What the call returned or
 * threw is the caller's: a mapper that throws, or a response that cannot be read, is ignored.
 */
function learnFrom<T>(
  acquirer: Acquirer,
  key: string,
  map: (outcome: T) => UpstreamResponse | undefined,
  outcome: T,
): void {
  try {
    const seen = map(outcome);
    if (seen !== undefined) learnFromUpstream(acquirer, key, seen);
  } catch {
    // Ignored, as documented on `response` and `errorResponse`.
  }
}

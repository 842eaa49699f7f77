import type { IncomingMessage, ServerResponse } from 'node:http';
import { createHttpLimiter } from './core.js';
import { type HeaderPair, joinHeader } from './headers.js';
import type { HttpLimitOptions, RequestFacts } from './options.js';
import type { HttpResponse } from './response.js';
import type { Settle } from './settle.js';

/**
 * Request facts of a node:http request (also the base of the Express adapter).
 * @example
 * ```ts
 * import { createServer } from 'node:http';
 * import { createMemoryLimiter, gcra } from 'sluice';
 * import { createHttpLimiter, nodeFacts } from 'sluice/http';
 *
 * const http = createHttpLimiter({ limiter: createMemoryLimiter({ algorithm: gcra({ limit: 60, periodMs: 60_000 }) }) });
 * createServer(async (req, res) => {
 *   const verdict = await http.check(nodeFacts(req, req.url));
 *   res.writeHead(verdict.action === 'respond' ? verdict.response.status : 200).end();
 * });
 * ```
 */
export function nodeFacts<Req extends IncomingMessage>(
  request: Req,
  url: string | undefined,
  routeId?: string,
): RequestFacts<Req> {
  const target = url ?? request.url ?? '/';
  const query = target.search(/[?#]/);
  return {
    request,
    method: request.method ?? 'GET',
    path: query === -1 ? target : target.slice(0, query),
    routeId,
    header(name) {
      const value = request.headers[name];
      return Array.isArray(value) ? value.join(', ') : value;
    },
    remoteAddress: request.socket?.remoteAddress,
  };
}

/**
 * Calls `settle` when `response` closes: with its status code once it finished, `undefined` when
 * the connection closed before the last byte was handed to it.
 */
export function settleOnClose(response: ServerResponse, settle: Settle): void {
  response.once('close', () => void settle(response.writableFinished ? response.statusCode : undefined));
}

/** Sets `headers`, adding to the RateLimit lists an outer Sluice middleware already set (see `joinHeader`). */
export function setNodeHeaders(response: ServerResponse, headers: readonly HeaderPair[]): void {
  for (const [name, value] of headers) response.setHeader(name, joinHeader(name, response.getHeader(name), value));
}

export function sendNodeResponse(response: ServerResponse, { status, headers, body }: HttpResponse): void {
  response.statusCode = status;
  setNodeHeaders(response, headers);
  response.end(body);
}

/**
 * node:http middleware: resolves `true` when the request may continue (rate-limit headers are
 * set on `res`), `false` when it has sent the 429/413/503 itself.
 * @throws {ConfigError} on invalid options.
 * @example
 * ```ts
 * import { createServer } from 'node:http';
 * import { createMemoryLimiter, gcra } from 'sluice';
 * import { nodeRateLimit } from 'sluice/http';
 *
 * const rateLimit = nodeRateLimit({ limiter: createMemoryLimiter({ algorithm: gcra({ limit: 60, periodMs: 60_000 }) }) });
 * createServer(async (req, res) => {
 *   if (!(await rateLimit(req, res))) return; // the 429 is sent
 *   res.end('hello\n');
 * }).listen(3000);
 * ```
 */
export function nodeRateLimit<Req extends IncomingMessage = IncomingMessage>(
  options: HttpLimitOptions<Req>,
): (req: Req, res: ServerResponse) => Promise<boolean> {
  const limiter = createHttpLimiter(options);
  return async (req, res) => {
    const verdict = await limiter.check(nodeFacts(req, req.url));
    if (verdict.action === 'respond') {
      sendNodeResponse(res, verdict.response);
      return false;
    }
    setNodeHeaders(res, verdict.headers);
    if (verdict.settle) settleOnClose(res, verdict.settle);
    return true;
  };
}

/**
 * Wraps a node:http request listener so it only runs for admitted requests. An error from a
 * user function (key, cost, skip, respond) or from `handler` (thrown, or its promise rejected)
 * goes to `onError` (default: console.error) and answers 500 if nothing was sent yet.
 * @throws {ConfigError} on invalid options.
 * @example
 * ```ts
 * import { createServer } from 'node:http';
 * import { createMemoryLimiter, gcra } from 'sluice';
 * import { withRateLimit } from 'sluice/http';
 *
 * const limiter = createMemoryLimiter({ algorithm: gcra({ limit: 60, periodMs: 60_000 }) });
 * createServer(withRateLimit({ limiter, trustProxy: 'loopback' }, (req, res) => res.end('hello\n'))).listen(3000);
 * ```
 */
export function withRateLimit<Res extends ServerResponse, Req extends IncomingMessage = IncomingMessage>(
  options: HttpLimitOptions<Req>,
  handler: (req: Req, res: Res) => unknown,
  onError: (error: unknown) => void = console.error,
): (req: Req, res: Res) => void {
  const check = nodeRateLimit(options);
  return (req, res) => {
    check(req, res)
      .then((admitted) => admitted && handler(req, res))
      .catch((error: unknown) => {
        onError(error);
        if (!res.headersSent) res.writeHead(500);
        res.end();
      });
  };
}

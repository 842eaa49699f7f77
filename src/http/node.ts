import type { IncomingMessage, ServerResponse } from 'node:http';
import { createHttpLimiter } from './core.js';
import type { HeaderPair } from './headers.js';
import type { HttpLimitOptions, RequestFacts } from './options.js';
import type { HttpResponse } from './response.js';

/** Request facts of a node:http request (also the base of the Express adapter). */
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

export function setNodeHeaders(response: ServerResponse, headers: readonly HeaderPair[]): void {
  for (const [name, value] of headers) response.setHeader(name, value);
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
 */
export function nodeRateLimit(
  options: HttpLimitOptions<IncomingMessage>,
): (req: IncomingMessage, res: ServerResponse) => Promise<boolean> {
  const limiter = createHttpLimiter(options);
  return async (req, res) => {
    const verdict = await limiter.check(nodeFacts(req, req.url));
    if (verdict.action === 'respond') {
      sendNodeResponse(res, verdict.response);
      return false;
    }
    setNodeHeaders(res, verdict.headers);
    return true;
  };
}

/**
 * Wraps a node:http request listener so it only runs for admitted requests. An error from a
 * user function (key, cost, skip, respond) answers 500 and goes to `onError` (default: console.error).
 * @throws {ConfigError} on invalid options.
 */
export function withRateLimit<Res extends ServerResponse>(
  options: HttpLimitOptions<IncomingMessage>,
  handler: (req: IncomingMessage, res: Res) => unknown,
  onError: (error: unknown) => void = console.error,
): (req: IncomingMessage, res: Res) => void {
  const check = nodeRateLimit(options);
  return (req, res) => {
    check(req, res).then(
      (admitted) => admitted && handler(req, res),
      (error: unknown) => {
        onError(error);
        if (!res.headersSent) res.writeHead(500).end();
      },
    );
  };
}

import type { IncomingMessage, ServerResponse } from 'node:http';
import { type HeaderPair, joinHeader } from '../headers.js';
import { nodeFacts } from '../node.js';
import type { RequestFacts } from '../options.js';
import type { HttpResponse } from '../response.js';

/** The parts of a Fastify reply the adapter uses (structural: fastify is not imported). */
interface FastifyReplyLike {
  raw: ServerResponse;
  header(name: string, value: string): unknown;
  getHeader(name: string): unknown;
  code(status: number): { send(body: string): unknown };
}

/** A request of either Nest platform: Express's is the IncomingMessage, Fastify's wraps it in `raw`. */
type PlatformRequest = IncomingMessage & {
  raw?: IncomingMessage;
  originalUrl?: string;
  route?: { path?: unknown };
  routeOptions?: { url?: unknown };
};

/**
 * The request facts of an Express or Fastify request under Nest, `request` being the caller's
 * (the ExecutionContext). The route pattern is Express's `req.route.path` or Fastify's
 * `routeOptions.url`, so `routes` entries written with patterns match.
 */
export function platformFacts<Req>(request: unknown, context: Req): RequestFacts<Req> {
  const platform = request as PlatformRequest;
  const raw = platform.raw ?? platform;
  const pattern = platform.route?.path ?? platform.routeOptions?.url;
  const facts = nodeFacts(raw, platform.originalUrl ?? raw.url, typeof pattern === 'string' ? pattern : undefined);
  return { ...facts, request: context };
}

const isFastify = (response: unknown): response is FastifyReplyLike =>
  typeof (response as Partial<FastifyReplyLike>).raw === 'object' &&
  typeof (response as Partial<FastifyReplyLike>).code === 'function';

/** The node ServerResponse under either platform's response. */
export function rawResponse(response: unknown): ServerResponse {
  return isFastify(response) ? response.raw : (response as ServerResponse);
}

/** Sets headers on the platform's response, adding to RateLimit lists already there (see `joinHeader`). */
export function setPlatformHeaders(response: unknown, headers: readonly HeaderPair[]): void {
  if (isFastify(response)) {
    for (const [name, value] of headers) response.header(name, joinHeader(name, response.getHeader(name), value));
    return;
  }
  const node = response as ServerResponse;
  for (const [name, value] of headers) node.setHeader(name, joinHeader(name, node.getHeader(name), value));
}

/** Sends a denial whose other headers the guard already set: status, content type, body. */
export function sendPlatformResponse(response: unknown, { status, headers, body }: HttpResponse): void {
  const contentType = headers.filter(([name]) => name.toLowerCase() === 'content-type');
  if (isFastify(response)) {
    for (const [name, value] of contentType) response.header(name, value);
    response.code(status).send(body);
    return;
  }
  const node = response as ServerResponse;
  node.statusCode = status;
  for (const [name, value] of contentType) node.setHeader(name, value);
  node.end(body);
}

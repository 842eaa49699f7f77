import { type ArgumentsHost, Catch, type ExceptionFilter, HttpException } from '@nestjs/common';
import type { HttpResponse } from '../response.js';
import { sendPlatformResponse } from './platform.js';

/**
 * Thrown by the guard for a denied request (429, 413, or 503 when the store failed and the route
 * fails closed). Its rate-limit headers and `Retry-After` are already on the response, so a
 * filter of your own that catches it keeps them; `sluiceResponse` is the full response the other
 * adapters send, and `getResponse()` its problem+json body as an object.
 */
export class RateLimitException extends HttpException {
  readonly sluiceResponse: HttpResponse;

  constructor(response: HttpResponse) {
    super(parsed(response.body), response.status);
    this.sluiceResponse = response;
  }
}

function parsed(body: string): string | Record<string, unknown> {
  try {
    return JSON.parse(body) as Record<string, unknown>;
  } catch {
    return body;
  }
}

/**
 * Sends a {@link RateLimitException} as the other adapters do: its status, its content type
 * (`application/problem+json`) and body, unchanged by Nest's default JSON rendering.
 */
export class RateLimitFilter implements ExceptionFilter<RateLimitException> {
  catch(exception: RateLimitException, host: ArgumentsHost): void {
    sendPlatformResponse(host.switchToHttp().getResponse(), exception.sluiceResponse);
  }
}
// Called, not written as `@Catch`: the package is compiled without experimentalDecorators.
Catch(RateLimitException)(RateLimitFilter);

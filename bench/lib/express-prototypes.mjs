/*
 * An Express app's HTTP server whose requests and responses are born with the app's prototypes.
 *
 * Express's `app.handle` gives every request and response its own prototypes with
 * `Object.setPrototypeOf(req, app.request)` and `(res, app.response)`. On Node 20 (V8 11.3) an
 * object whose prototype was changed after construction gets a new hidden class for every
 * property added afterwards, and those are not shared between objects: each response that
 * node:http's writeHead/end then fills in has hidden classes no other response has, so every
 * property access in node:http's outgoing code misses its inline caches (V8's --log-ic: a miss
 * per request at each of some 25 sites, none without the prototype change). In this bench it
 * was 100–200 of the no-limiter server's 130–260 CPU µs per request and 15 of its 26 kB of
 * heap allocated per request, with rounds 70–200 µs apart, swamping what a limiter adds.
 *
 * Here the server builds requests and responses from subclasses whose prototypes sit in front
 * of the app's, and the app's `request`/`response` point at those: Express's `setPrototypeOf`
 * then sets the prototype an object already has, which changes nothing. Every Express method
 * and setting is reached through the same chain (plus one empty link), so every middleware and
 * handler runs as before, in each variant alike (no limiter, Sluice, the peer). Stock Express
 * pays the slower path on every property access to `req`/`res`, its own and a limiter's:
 * HTTP_BENCH_EXPRESS=stock measures that instead.
 */
import { createServer, IncomingMessage, ServerResponse } from 'node:http';

/**
 * @param {import('express').Express} app
 * @returns {import('node:http').Server}
 */
export function serverWithPrototypes(app) {
  class ExpressRequest extends IncomingMessage {}
  class ExpressResponse extends ServerResponse {}
  Object.setPrototypeOf(ExpressRequest.prototype, app.request);
  Object.setPrototypeOf(ExpressResponse.prototype, app.response);
  Object.assign(app, { request: ExpressRequest.prototype, response: ExpressResponse.prototype });
  return createServer({ IncomingMessage: ExpressRequest, ServerResponse: ExpressResponse }, app);
}

// Run by `deno test` (see runtimes.test.ts): the conformance suite and the Hono adapter on Deno.
import { after, describe, it } from 'node:test';
import { getConnInfo } from 'hono/deno';
import { registerConformance } from './conformance.js';
import { requireEnv } from './env.js';
import { registerHonoChecks } from './hono-check.js';

/** The part of Deno's API this file uses (Deno's own types are not installed). */
declare const Deno: {
  serve(
    options: { hostname: string; port: number; onListen(address: { port: number }): void },
    handler: (request: Request, info: unknown) => Response | Promise<Response>,
  ): { finished: Promise<void>; shutdown(): Promise<void> };
};

const test = { describe, it, after };
registerConformance(test, requireEnv('SLUICE_REDIS_URL'));
registerHonoChecks(test, {
  clientAddress: (c) => getConnInfo(c).remote.address,
  serve: (fetch) =>
    new Promise((resolve) => {
      const server = Deno.serve(
        {
          hostname: '127.0.0.1',
          port: 0,
          onListen: ({ port }) => resolve({ url: `http://127.0.0.1:${port}/`, close: () => server.shutdown() }),
        },
        fetch,
      );
    }),
});

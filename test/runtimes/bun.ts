// Run by `bun test` (see runtimes.test.ts): the conformance suite and the Hono adapter on Bun.
import { after, describe, it } from 'node:test';
import { getConnInfo } from 'hono/bun';
import { registerConformance } from './conformance.js';
import { requireEnv } from './env.js';
import { registerHonoChecks } from './hono-check.js';

/** The part of Bun's API this file uses (Bun's own types are not installed). */
declare const Bun: {
  serve(options: {
    hostname: string;
    port: number;
    fetch(request: Request, server: unknown): Response | Promise<Response>;
  }): { url: URL; stop(closeActiveConnections: boolean): Promise<void> };
};

const test = { describe, it, after };
registerConformance(test, requireEnv('SLUICE_REDIS_URL'));
registerHonoChecks(test, {
  clientAddress: (c) => getConnInfo(c).remote.address,
  async serve(fetch) {
    const server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch });
    return { url: server.url.href, close: () => server.stop(true) };
  },
});

import { defineConfig } from 'tsup';

/** The package's entry points (dist/<name>.js), one per public subpath: each a folder with an index.ts. */
export const libraryEntries = {
  index: 'src/index.ts',
  redis: 'src/stores/redis/index.ts',
  testing: 'src/testing/index.ts',
  policy: 'src/policy/index.ts',
  concurrency: 'src/concurrency/index.ts',
  http: 'src/http/index.ts',
  express: 'src/http/express/index.ts',
  fastify: 'src/http/fastify/index.ts',
  hono: 'src/http/hono/index.ts',
  koa: 'src/http/koa/index.ts',
  nestjs: 'src/http/nestjs/index.ts',
  outbound: 'src/outbound/index.ts',
  otel: 'src/observability/index.ts',
};

export default defineConfig([
  {
    entry: libraryEntries,
    format: ['esm', 'cjs'],
    // Shared chunks in CJS too: one copy of each error class per format, so `instanceof` holds
    // across the entries of one format. The ESM and CJS builds still hold one copy each, so
    // Sluice's own code recognises errors by brand (isSluiceError), never by `instanceof`.
    splitting: true,
    dts: true,
    clean: true,
    target: 'node20',
    sourcemap: true,
  },
  {
    // The fleet demo, outside the package: demo/dist/cli.js forks demo/dist/fleet-instance.js.
    entry: { cli: 'demo/cli.ts', 'fleet-instance': 'demo/fleet/instance-main.ts' },
    outDir: 'demo/dist',
    format: ['esm'],
    // Loaded from node_modules, and only with --metrics.
    external: [/^@opentelemetry\//],
    target: 'node20',
    banner: { js: '#!/usr/bin/env node' },
  },
]);

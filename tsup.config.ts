import { defineConfig } from 'tsup';

export default defineConfig([
  {
    entry: {
      index: 'src/index.ts',
      redis: 'src/redis.ts',
      testing: 'src/testing/index.ts',
      policy: 'src/policy/index.ts',
      http: 'src/http.ts',
      express: 'src/express.ts',
      fastify: 'src/fastify.ts',
      hono: 'src/hono.ts',
      koa: 'src/koa.ts',
      otel: 'src/observability/index.ts',
    },
    format: ['esm', 'cjs'],
    // Shared chunks in CJS too: one copy of each error class, so `instanceof` holds across entries.
    splitting: true,
    dts: true,
    clean: true,
    target: 'node20',
    sourcemap: true,
  },
  {
    // The fleet demo forks dist/fleet-instance.js; bench/ imports its helpers from dist/fleet.js.
    entry: { cli: 'src/cli.ts', 'fleet-instance': 'src/fleet/instance-main.ts', fleet: 'src/fleet/index.ts' },
    format: ['esm'],
    target: 'node20',
    banner: { js: '#!/usr/bin/env node' },
  },
]);

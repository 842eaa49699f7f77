import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Bun, Deno and workerd run the built package: `npm run test:runtimes` (test/runtimes/vitest.config.ts).
    exclude: [...configDefaults.exclude, 'test/runtimes/**'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Two cores shared with redis-server processes: keep parallelism modest.
    maxWorkers: 2,
  },
});

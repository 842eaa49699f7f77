import { defineConfig } from 'vitest/config';

// The runtimes beyond Node (`npm run test:runtimes`, after a build): they run the built package.
export default defineConfig({
  test: {
    include: ['test/runtimes/**/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 30_000,
    maxWorkers: 1,
  },
});

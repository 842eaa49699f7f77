import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Two cores shared with redis-server processes: keep parallelism modest.
    maxWorkers: 2,
  },
});

import { defineConfig } from 'vitest/config';

// One browser and one server for the whole file: the tests run in order, as a user's day would.
export default defineConfig({
  test: { include: ['test/**/*.test.ts'], fileParallelism: false, hookTimeout: 120_000 },
});

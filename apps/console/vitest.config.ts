import { defineConfig, mergeConfig } from 'vitest/config';
import viteConfig from './vite.config.js';

// The build's resolution (the SDK from its source), and one browser and one server for the whole
// file: the tests run in order, as a user's day would.
export default mergeConfig(
  viteConfig,
  defineConfig({
    test: { include: ['test/**/*.test.ts'], fileParallelism: false, hookTimeout: 120_000 },
  }),
);

// The console is built to dist/ and served by the server at /console (same origin as the API).
// `pnpm --filter console dev` serves it with hot reload and forwards /api to a running server
// (AGENTLINE_URL, default http://127.0.0.1:8080), so the page and the API share an origin there
// too.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

export default defineConfig({
  base: '/console/',
  // The SDK from its source, as the console's typecheck reads it: the build and the tests need no
  // earlier build of the SDK (a fresh clone has none).
  resolve: {
    alias: {
      '@agentline/sdk': fileURLToPath(new URL('../../packages/sdk/src/index.ts', import.meta.url)),
    },
  },
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
  build: { outDir: 'dist', emptyOutDir: true, target: 'es2022', sourcemap: false },
  server: {
    host: '127.0.0.1',
    proxy: { '/api': process.env.AGENTLINE_URL ?? 'http://127.0.0.1:8080' },
  },
});

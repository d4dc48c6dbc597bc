// The server as it is deployed and as the tests start it: one file per entry, bundled by esbuild,
// with its dependencies. `pnpm --filter @agentline/server build` writes it to dist/
// (`tsx bundle.ts dist`); the tests' global set-up to a folder of their own
// (test/support/server-build.ts).
//
// Why a bundle: a process, and each of its worker threads, loads one file instead of the hundreds
// of modules under src and node_modules. On Node.js 22 and 24, loading each module of a package
// parses the package's package.json again (nodejs/node#60397); drizzle-orm's is 179 kB and it has
// hundreds of modules, so on Node.js 24 a start from separate modules took 2.2 s to listening and
// each thread about 1.2 s more CPU, against 0.7 s for the bundle on Node.js 20 and 24 alike.
//
// Left out of the bundle, and installed beside it: the native SQLite drivers (a compiled addon
// each); pino, whose transports start threads on files of their own; the docs page's script,
// which the server serves by path. The threads' entries sit beside the server's, where
// runtime/module-thread.ts looks for them; migrations and the console are found from the
// package's folder (package-root.ts).

import { basename } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

/** Processes' entries, at their path under src. */
const PROCESS_ENTRIES = ['main', 'cli/main'];
/**
 * Threads' entries, under their module's own name: a starter names its thread by a file beside
 * itself (`./event-read-worker`, runtime/module-thread.ts), which in a bundle is beside the bundle.
 */
const THREAD_ENTRIES = ['runtime/event-read-worker', 'runtime/webhooks/delivery-thread-entry'];

const source = (module: string) => fileURLToPath(new URL(`src/${module}.ts`, import.meta.url));

export async function bundleServer(outdir: string): Promise<void> {
  await build({
    entryPoints: Object.fromEntries([
      ...PROCESS_ENTRIES.map((module) => [module, source(module)]),
      ...THREAD_ENTRIES.map((module) => [basename(module), source(module)]),
    ]),
    outdir,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    sourcemap: true,
    external: ['better-sqlite3', 'better-sqlite3-napi', 'pg-native', 'pino', '@scalar/*'],
    // The CommonJS packages bundled (pg, among others) call require() for Node's own modules.
    banner: {
      js: "import { createRequire as createRequireOfBundle } from 'node:module'; const require = createRequireOfBundle(import.meta.url);",
    },
    logLevel: 'warning',
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const outdir = process.argv[2];
  if (!outdir) throw new Error('usage: tsx bundle.ts OUTDIR (for example dist)');
  await bundleServer(outdir);
}

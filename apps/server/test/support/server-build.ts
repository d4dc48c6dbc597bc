// Global set-up of both test projects: the server bundled once for the run, for the server
// processes the tests start (startServerProcess, entryArgs). A process loads one file per entry
// instead of the hundreds of modules under src and node_modules:
// - Under tsx a process start cost twice the CPU (1.5 s against 0.8 s on the 2-core VM), and the
//   suite starts dozens of them.
// - On Node.js 22 and 24, loading each module of a package parses the package's package.json
//   again (nodejs/node#60397). drizzle-orm's is 179 kB and it has hundreds of modules, so on
//   Node.js 24 every process and each of its worker threads spent about 1.2 s more CPU in it.
// No type check here (`pnpm typecheck` does it). Kept out of the bundle: the native SQLite
// drivers, which load a compiled addon; pino, whose transports start threads on files of its
// own; and the docs page's bundle, which the server serves by path.
//
// The entries sit side by side (a server thread is started on the file beside its starter,
// serving/module-thread.ts), three folders below apps/server, as src/db/engine/migrate.ts and
// src/routes/console/console.index.ts are: they find the migrations and the console's files by
// a path relative to their own file, which then holds for the bundle too.

import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const SERVER_DIR = fileURLToPath(new URL('../..', import.meta.url));
/** Where startServerProcess finds this run's build. */
export const SERVER_BUILD_VARIABLE = 'AGENTLINE_TEST_SERVER_BUILD';

/** The bundle's files by the module under src each starts from. */
const ENTRIES = {
  main: 'main',
  'cli-main': 'cli/main',
  'event-read-worker': 'serving/event-read-worker',
  'delivery-thread-entry': 'webhooks/delivery-thread-entry',
} as const;

/** The file of a process's entry module (`main`, `cli/main`) in the build at `build`. */
export const builtEntry = (build: string, entry: 'main' | 'cli/main') =>
  join(build, entry === 'main' ? 'main.js' : 'cli-main.js');

export default async function setup(): Promise<() => void> {
  const root = mkdtempSync(join(SERVER_DIR, '.test-build-'));
  const outdir = join(root, 'bundle', 'entries');
  await build({
    entryPoints: Object.fromEntries(
      Object.entries(ENTRIES).map(([file, module]) => [
        file,
        join(SERVER_DIR, 'src', `${module}.ts`),
      ]),
    ),
    outdir,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    external: ['better-sqlite3', 'better-sqlite3-napi', 'pg-native', 'pino', '@scalar/*'],
    // The CommonJS packages bundled (pg, among others) call require() for Node's own modules.
    banner: {
      js: "import { createRequire as createRequireOfBundle } from 'node:module'; const require = createRequireOfBundle(import.meta.url);",
    },
    logLevel: 'warning',
  });
  process.env[SERVER_BUILD_VARIABLE] = outdir;
  return () => rmSync(root, { recursive: true, force: true });
}

// Global set-up of both test projects: the server's sources transpiled once for the run, for the
// server processes the tests start (startServerProcess). Under tsx a process start costs twice
// the CPU (1.5 s against 0.8 s on the 2-core VM), and the suite starts dozens of them: a sixth of
// its time. Only the syntax is transformed (no bundling, no type check, which `pnpm typecheck`
// does), so each file keeps its place and its imports, and the build folder sits in apps/server
// beside src, where the paths the server finds its migrations and packages by still hold.

import { cpSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const SERVER_DIR = fileURLToPath(new URL('../..', import.meta.url));
/** Where startServerProcess finds this run's build. */
export const SERVER_BUILD_VARIABLE = 'AGENTLINE_TEST_SERVER_BUILD';

export default async function setup(): Promise<() => void> {
  const source = join(SERVER_DIR, 'src');
  const outdir = mkdtempSync(join(SERVER_DIR, '.test-build-'));
  const files = readdirSync(source, { recursive: true, encoding: 'utf8' });
  await build({
    entryPoints: files.filter((file) => file.endsWith('.ts')).map((file) => join(source, file)),
    outbase: source,
    outdir,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    // Kept as written (`with { type: 'json' }`), which Node 20 requires of a JSON import.
    supported: { 'import-attributes': true },
    logLevel: 'warning',
  });
  for (const file of files.filter((name) => name.endsWith('.json'))) {
    cpSync(join(source, file), join(outdir, file));
  }
  process.env[SERVER_BUILD_VARIABLE] = outdir;
  return () => rmSync(outdir, { recursive: true, force: true });
}

// Global set-up of both test projects: the server bundled once for the run (bundle.ts), as it is
// deployed, for the server processes the tests start (startServerProcess, entryArgs). Types are
// checked by `pnpm typecheck`, not here.

import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleServer } from '../../bundle.js';

const SERVER_DIR = fileURLToPath(new URL('../..', import.meta.url));
/** Where startServerProcess finds this run's build. */
export const SERVER_BUILD_VARIABLE = 'AGENTLINE_TEST_SERVER_BUILD';

export default async function setup(): Promise<() => void> {
  // Inside the package, whose folder the server finds its migrations by (src/package-root.ts).
  const outdir = mkdtempSync(join(SERVER_DIR, '.test-build-'));
  await bundleServer(outdir);
  process.env[SERVER_BUILD_VARIABLE] = outdir;
  return () => rmSync(outdir, { recursive: true, force: true });
}

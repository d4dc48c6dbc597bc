// The server bundled as it is deployed (bundle.ts), for the server and CLI processes that tests
// and scripts start (startServerProcess, entryArgs). A test run's global set-up (this module's
// default export, in both test projects) builds this checkout's once for all its workers; a
// script that starts servers outside a test run (benchmarks, the SDK consumer check) builds each
// checkout's on its first server, so what it measures is what production runs: under tsx a
// server took 275-304 MiB at start against 150 MiB, and about 8 % more CPU per list request.
// Types are checked by `pnpm typecheck`, not here.

import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type * as BundleModule from '../../bundle.js';

const SERVER_DIR = resolve(fileURLToPath(new URL('../..', import.meta.url)));
/** Where a test run's workers find the run's build of this checkout. */
const SERVER_BUILD_VARIABLE = 'AGENTLINE_SERVER_BUILD';

/** Builds this process made outside a test run, by server directory; null: none to make. */
const builds = new Map<string, Promise<string | null>>();

/**
 * A new bundle of the server at `serverDir` (this checkout's or another's) by that checkout's own
 * bundle.ts, or null for a checkout from before there was one (run under tsx). Inside the
 * package, whose folder the server finds its migrations by (src/package-root.ts).
 */
async function bundleOf(serverDir: string): Promise<string | null> {
  const bundler = join(serverDir, 'bundle.ts');
  if (!existsSync(bundler)) return null;
  const outdir = mkdtempSync(join(serverDir, '.test-build-'));
  const { bundleServer } = (await import(pathToFileURL(bundler).href)) as typeof BundleModule;
  await bundleServer(outdir);
  return outdir;
}

export default async function setup(): Promise<() => void> {
  const outdir = (await bundleOf(SERVER_DIR))!;
  process.env[SERVER_BUILD_VARIABLE] = outdir;
  return () => rmSync(outdir, { recursive: true, force: true });
}

/** This checkout's build made by the test run's global set-up, in a test run. */
export function testRunBuild(): string | undefined {
  return process.env[SERVER_BUILD_VARIABLE];
}

/**
 * The build of the server at `serverDir`: the test run's for this checkout, else one made on the
 * first call and removed when this process exits; null for a checkout without bundle.ts.
 */
export function serverBuild(serverDir = SERVER_DIR): Promise<string | null> {
  const dir = resolve(serverDir);
  const testRun = testRunBuild();
  if (dir === SERVER_DIR && testRun) return Promise.resolve(testRun);
  let build = builds.get(dir);
  if (!build) {
    build = bundleOf(dir).then((outdir) => {
      if (outdir) process.once('exit', () => rmSync(outdir, { recursive: true, force: true }));
      return outdir;
    });
    builds.set(dir, build);
  }
  return build;
}

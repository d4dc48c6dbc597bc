// A worker thread running one of the server's own modules: beside the caller's source, as
// TypeScript under tsx (development, tests in process), or, in a bundle (a deployment, the tests'
// server processes; bundle.ts), the bundle's entry file of that name beside the caller's bundle.

import { basename, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';

const RUNS_TYPESCRIPT = import.meta.url.endsWith('.ts');

/** A bundle (bundle.ts) whose entries the threads run while the caller runs TypeScript. */
let threadBuild: string | undefined;

/**
 * Runs the threads of this process from the bundle in `build` (bundle.ts's output of the same
 * sources) rather than from the sources under tsx. For a process that runs the app from its
 * TypeScript beside a bundle built for it, the tests' workers: under tsx each thread loads every
 * module through tsx's loader, many times the CPU of the bundle's one file (docs/benchmarks.md,
 * "Figures behind the code").
 */
export function runThreadsFromBuild(build: string): void {
  threadBuild = build;
}

/**
 * Starts a thread on the module `path` (relative to `base`, the caller's import.meta.url,
 * without its extension), handing it `workerData`.
 *
 * The caller terminates the thread only once it has said it is loaded (its first message) or
 * has ended: better-sqlite3 13, which Node.js 22 and later load, aborts the whole process when
 * its thread is terminated while the addon registers itself.
 */
export function startModuleThread(path: string, base: string, workerData: unknown): Worker {
  if (RUNS_TYPESCRIPT && threadBuild) {
    return new Worker(pathToFileURL(join(threadBuild, `${basename(path)}.js`)), { workerData });
  }
  const url = new URL(`${path}.${RUNS_TYPESCRIPT ? 'ts' : 'js'}`, base);
  // A worker does not inherit tsx's loader: under tsx it registers it before the module.
  return RUNS_TYPESCRIPT
    ? new Worker(
        `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(url.href)}); });`,
        { eval: true, workerData },
      )
    : new Worker(url, { workerData });
}

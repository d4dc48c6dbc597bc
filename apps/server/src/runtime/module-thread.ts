// A worker thread running one of the server's own modules: beside the caller's source, as
// TypeScript under tsx (development, tests in process), or, in a bundle (a deployment, the tests'
// server processes; bundle.ts), the bundle's entry file of that name beside the caller's bundle.

import { Worker } from 'node:worker_threads';

const RUNS_TYPESCRIPT = import.meta.url.endsWith('.ts');

/**
 * Starts a thread on the module `path` (relative to `base`, the caller's import.meta.url,
 * without its extension), handing it `workerData`.
 */
export function startModuleThread(path: string, base: string, workerData: unknown): Worker {
  const url = new URL(`${path}.${RUNS_TYPESCRIPT ? 'ts' : 'js'}`, base);
  // A worker does not inherit tsx's loader: under tsx it registers it before the module.
  return RUNS_TYPESCRIPT
    ? new Worker(
        `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(url.href)}); });`,
        { eval: true, workerData },
      )
    : new Worker(url, { workerData });
}

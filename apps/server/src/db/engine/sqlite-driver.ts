// The better-sqlite3 build this Node.js can run. Releases up to 12 wrap their objects with V8's
// ObjectWrap, and on Node.js 24 a statement collected by the garbage collector aborts the
// process (`Assertion failed: (env) != nullptr` in RemoveEnvironmentCleanupHook). Release 13 is
// built on Node-API, which fixes that, but needs Node.js 22 (on 20 it crashes at its first
// query). So 13 (the optional dependency `better-sqlite3-napi`, which pnpm leaves out on Node.js
// 20) runs on 22 and later, and 12 only on 20; the two share one API.

import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';

const require = createRequire(import.meta.url);
const NODE_MAJOR = Number(process.versions.node.split('.')[0]);

export const SQLITE_DRIVER_PACKAGE = NODE_MAJOR >= 22 ? 'better-sqlite3-napi' : 'better-sqlite3';

function load(): typeof BetterSqlite3 {
  try {
    return require(SQLITE_DRIVER_PACKAGE) as typeof BetterSqlite3;
  } catch (error) {
    throw new Error(
      `Node.js ${process.versions.node} needs the package ${SQLITE_DRIVER_PACKAGE}, which is not installed: ` +
        'run `pnpm install` again with this Node.js.',
      { cause: error },
    );
  }
}

/** better-sqlite3's Database class, from the build this Node.js runs. */
export const Database: typeof BetterSqlite3 = load();

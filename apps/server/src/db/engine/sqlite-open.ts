// Opens a SQLite database file, as the server, the CLI and the server's reader threads open it.
// Apart from client.ts, which opens either database, so that a reader thread, which reads only
// SQLite, does not load the PostgreSQL driver (docs/benchmarks.md, "Figures behind the code").

import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { SQLITE_SPELLING, type Spelling } from './spelling.js';
import { Database } from './sqlite-driver.js';

export interface SqliteDb {
  kind: 'sqlite';
  /** How queries spell what the two databases spell differently (spelling.ts). */
  spelling: Spelling;
  /**
   * The one connection: portable-sql.ts runs queries on it; the group commit and the event
   * import also open transactions on it directly.
   */
  sqlite: BetterSqlite3.Database;
  /** How long a list read may run (0: no limit); only the reader threads can stop one. */
  listQueryTimeoutMs: number;
  close(): Promise<void>;
}

/**
 * How long a write waits for another connection's write lock before it fails as a busy database
 * (a 503): the CLI next to a running server, or a second server process, holds it for a commit.
 */
export const SQLITE_BUSY_TIMEOUT_MS = 5000;

/**
 * The write-ahead log's size on disk once SQLite starts it again from its first byte. It holds a
 * few MB while the server serves, but an import outruns the checkpoints and leaves it hundreds of
 * MB long (docs/benchmarks.md, "Figures behind the code"); SQLite reuses such a file without
 * shrinking it, so without this limit the disk stays taken until the last connection closes.
 */
export const WAL_SIZE_LIMIT_BYTES = 64 * 1024 * 1024;

/**
 * A SQLite database file (created if missing) or `:memory:`, whose list reads may run
 * `listQueryTimeoutMs` (0: no limit; DbOptions in client.ts).
 */
export function openSqlite(databaseUrl: string, listQueryTimeoutMs = 0): SqliteDb {
  if (databaseUrl !== ':memory:') mkdirSync(dirname(resolve(databaseUrl)), { recursive: true });
  const sqlite = new Database(databaseUrl);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma(`busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`);
  // Safe with WAL: a power cut can lose the last commits but never corrupts the file.
  sqlite.pragma('synchronous = NORMAL');
  // 64 MB instead of 2 MB: the events table has eleven indexes, and bulk imports slow down
  // sharply once their pages no longer fit. Memory is taken only as pages are used.
  sqlite.pragma('cache_size = -65536');
  return {
    kind: 'sqlite',
    spelling: SQLITE_SPELLING,
    sqlite,
    listQueryTimeoutMs,
    close: async () => {
      sqlite.close();
    },
  };
}

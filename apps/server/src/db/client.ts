// Opens the database named by a DATABASE_URL. Today that is SQLite (a file path or `:memory:`);
// PostgreSQL joins the `Db` union later with its own `kind`, and repositories branch on it, so
// handlers keep calling the same repository functions.

import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { drizzle, type BetterSQLite3Database } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import * as schema from './schema.js';

export type SqliteOrm = BetterSQLite3Database<typeof schema>;
export type SqliteTransaction = Parameters<Parameters<SqliteOrm['transaction']>[0]>[0];

export interface SqliteDb {
  kind: 'sqlite';
  orm: SqliteOrm;
  /** The raw better-sqlite3 handle, for prepared statements on hot paths (event import). */
  sqlite: Database.Database;
  close(): void;
}

export type Db = SqliteDb;

export class UnsupportedDatabaseError extends Error {
  override name = 'UnsupportedDatabaseError';
}

// Resolved from this module's location, so it is the same folder whether the code runs from
// src/ under tsx or from a compiled dist/ (both sit two levels below apps/server).
const SQLITE_MIGRATIONS_FOLDER = fileURLToPath(new URL('../../drizzle/sqlite', import.meta.url));

export function createDb(databaseUrl: string): Db {
  if (/^postgres(ql)?:\/\//i.test(databaseUrl)) {
    throw new UnsupportedDatabaseError(
      'PostgreSQL is not supported yet: set DATABASE_URL to a SQLite file path (for example data/agentline.db)',
    );
  }
  if (databaseUrl !== ':memory:') mkdirSync(dirname(resolve(databaseUrl)), { recursive: true });
  const sqlite = new Database(databaseUrl);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('foreign_keys = ON');
  // Another process (the CLI next to a running server) may hold the write lock briefly.
  sqlite.pragma('busy_timeout = 5000');
  // Safe with WAL: a power cut can lose the last commits but never corrupts the file.
  sqlite.pragma('synchronous = NORMAL');
  // 64 MB instead of 2 MB: the events table has seven indexes, and bulk imports slow down
  // sharply once their pages no longer fit. Memory is taken only as pages are used.
  sqlite.pragma('cache_size = -65536');
  const orm = drizzle({ client: sqlite, schema });
  return { kind: 'sqlite', orm, sqlite, close: () => sqlite.close() };
}

/** Applies the committed migrations that have not run yet; running it again is a no-op. */
export async function migrateDb(db: Db): Promise<void> {
  migrate(db.orm, { migrationsFolder: SQLITE_MIGRATIONS_FOLDER });
}

/**
 * Runs `work` in one write transaction (BEGIN IMMEDIATE: takes the write lock up front, so two
 * processes never deadlock upgrading a read lock) and commits, or rolls back if it throws.
 *
 * On SQLite `work` must be synchronous: use drizzle's `.run()`, `.all()`, `.get()` on `tx`.
 * The process has one connection, so a transaction that awaited would let other requests'
 * statements run inside it. Keep this inside repository functions, which stay async outwardly.
 */
export async function withTransaction<T>(
  db: Db,
  work: (tx: SqliteTransaction) => T extends PromiseLike<unknown> ? never : T,
): Promise<T> {
  return db.orm.transaction(
    (tx) => {
      const result = work(tx);
      if (result instanceof Promise) {
        throw new TypeError('withTransaction: on SQLite the work must be synchronous');
      }
      return result;
    },
    { behavior: 'immediate' },
  );
}

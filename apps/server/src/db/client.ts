// Opens the database named by a DATABASE_URL: SQLite (a file path or `:memory:`, the embedded
// default) or PostgreSQL (`postgres://...`, for several server processes on one database).
// Repositories run their queries through portable-sql.ts, so handlers call the same functions
// whichever it is.

import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type BetterSqlite3 from 'better-sqlite3';
import { drizzle as drizzleSqlite } from 'drizzle-orm/better-sqlite3';
import { migrate as migrateSqlite } from 'drizzle-orm/better-sqlite3/migrator';
import { drizzle as drizzlePostgres } from 'drizzle-orm/node-postgres';
import { migrate as migratePostgres } from 'drizzle-orm/node-postgres/migrator';
import pg from 'pg';
import { ensureCursorSecret } from './repositories/cursor-secrets.js';
import { POSTGRES_SPELLING, SQLITE_SPELLING, type Spelling } from './spelling.js';
import { startSqliteReaders, type SqliteReaders } from './read-pool.js';
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
  /** Threads that run the long reads off the event loop, when the server asked for them. */
  readers?: SqliteReaders;
  close(): Promise<void>;
}

export interface PostgresDb {
  kind: 'postgres';
  spelling: Spelling;
  pool: pg.Pool;
  close(): Promise<void>;
}

export type Db = SqliteDb | PostgresDb;

export function isPostgresUrl(databaseUrl: string): boolean {
  return /^postgres(ql)?:\/\//i.test(databaseUrl);
}

/** The URL as it may be shown or logged: a PostgreSQL password is replaced by `***`. */
export function describeDatabaseUrl(databaseUrl: string): string {
  if (!isPostgresUrl(databaseUrl)) return databaseUrl;
  try {
    const url = new URL(databaseUrl);
    if (url.password) url.password = '***';
    return url.toString();
  } catch {
    return 'a PostgreSQL URL that cannot be parsed';
  }
}

// count(*) and bigint ids arrive as int8, which node-postgres leaves as strings (they may exceed
// 2^53). Agentline's counts and ids stay far below that, so they are read as numbers everywhere.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));

export interface DbOptions {
  /** PostgreSQL connections this process may open. */
  poolSize?: number;
  /** SQLite: threads that read the events list off the event loop (none: it reads inline). */
  readerThreads?: number;
}

export function createDb(databaseUrl: string, options: DbOptions = {}): Db {
  return isPostgresUrl(databaseUrl)
    ? openPostgres(databaseUrl, options)
    : openSqlite(databaseUrl, options);
}

function openPostgres(databaseUrl: string, options: DbOptions): PostgresDb {
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    // Several server processes share one PostgreSQL server: each keeps its pool small.
    max: options.poolSize ?? 10,
    // Names the connections in pg_stat_activity, for the operator.
    application_name: 'agentline',
  });
  // An idle connection the server drops (a restart) must not crash the process: the pool
  // replaces it, and the next query reports the outage as a 503.
  pool.on('error', () => {});
  return { kind: 'postgres', spelling: POSTGRES_SPELLING, pool, close: () => pool.end() };
}

/** A SQLite database file (created if missing) or `:memory:`. */
export function openSqlite(databaseUrl: string, options: DbOptions = {}): SqliteDb {
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
  // An in-memory database exists in this connection only: nothing another thread could read.
  const readers =
    options.readerThreads && databaseUrl !== ':memory:'
      ? startSqliteReaders(databaseUrl, options.readerThreads)
      : undefined;
  return {
    kind: 'sqlite',
    spelling: SQLITE_SPELLING,
    sqlite,
    ...(readers ? { readers } : {}),
    close: async () => {
      await readers?.close();
      sqlite.close();
    },
  };
}

// Resolved from this module's location, so they are the same folders whether the code runs
// from src/ under tsx or from a compiled dist/ (both sit two levels below apps/server).
const MIGRATIONS_FOLDERS = {
  sqlite: fileURLToPath(new URL('../../drizzle/sqlite', import.meta.url)),
  postgres: fileURLToPath(new URL('../../drizzle/postgres', import.meta.url)),
};

/** Any constant: the key of the advisory lock that lets one process at a time migrate. */
const MIGRATION_LOCK_KEY = 0x6167_6c6d; // "aglm"

/**
 * Applies the committed migrations that have not run yet, and stores the first list cursor secret
 * if there is none (repositories/cursor-secrets.ts); running it again is a no-op.
 */
export async function migrateDb(db: Db): Promise<void> {
  if (db.kind === 'sqlite') {
    migrateSqlite(drizzleSqlite({ client: db.sqlite }), {
      migrationsFolder: MIGRATIONS_FOLDERS.sqlite,
    });
    await ensureCursorSecret(db);
    return;
  }
  // Several processes may start at once on one database: they take turns, and the later ones
  // find nothing left to apply.
  const lock = await db.pool.connect();
  try {
    await lock.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    await migratePostgres(drizzlePostgres({ client: db.pool }), {
      migrationsFolder: MIGRATIONS_FOLDERS.postgres,
    });
    await ensureCursorSecret(db);
  } finally {
    await lock.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => {});
    lock.release();
  }
}

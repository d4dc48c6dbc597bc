// Opens the database named by a DATABASE_URL: SQLite (a file path or `:memory:`, the embedded
// default) or PostgreSQL (`postgres://...`, for several server processes on one database).
// Repositories branch on `kind`, so handlers call the same functions whichever it is.

import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type BetterSqlite3 from 'better-sqlite3';
import { drizzle as drizzleSqlite, type BetterSQLite3Database } from 'drizzle-orm/better-sqlite3';
import { migrate as migrateSqlite } from 'drizzle-orm/better-sqlite3/migrator';
import { drizzle as drizzlePostgres, type NodePgDatabase } from 'drizzle-orm/node-postgres';
import { migrate as migratePostgres } from 'drizzle-orm/node-postgres/migrator';
import pg from 'pg';
import { isConcurrencyConflict } from './errors.js';
import { startSqliteReaders, type SqliteReaders } from './read-pool.js';
import { Database } from './sqlite-driver.js';
import * as postgresSchema from './schema-postgres.js';
import * as schema from './schema.js';

export type SqliteOrm = BetterSQLite3Database<typeof schema>;
export type SqliteTransaction = Parameters<Parameters<SqliteOrm['transaction']>[0]>[0];
export type PostgresOrm = NodePgDatabase<typeof postgresSchema>;
export type PostgresTransaction = Parameters<Parameters<PostgresOrm['transaction']>[0]>[0];

export interface SqliteDb {
  kind: 'sqlite';
  orm: SqliteOrm;
  /** The raw better-sqlite3 handle, for statements and transactions used directly on hot paths (event import, events list, group commit). */
  sqlite: BetterSqlite3.Database;
  /** Threads that run the long reads off the event loop, when the server asked for them. */
  readers?: SqliteReaders;
  close(): Promise<void>;
}

export interface PostgresDb {
  kind: 'postgres';
  orm: PostgresOrm;
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
  if (isPostgresUrl(databaseUrl)) {
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
    const orm = drizzlePostgres({ client: pool, schema: postgresSchema });
    return { kind: 'postgres', orm, pool, close: () => pool.end() };
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
  const orm = drizzleSqlite({ client: sqlite, schema });
  // An in-memory database exists in this connection only: nothing another thread could read.
  const readers =
    options.readerThreads && databaseUrl !== ':memory:'
      ? startSqliteReaders(databaseUrl, options.readerThreads)
      : undefined;
  return {
    kind: 'sqlite',
    orm,
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

/** Applies the committed migrations that have not run yet; running it again is a no-op. */
export async function migrateDb(db: Db): Promise<void> {
  if (db.kind === 'sqlite') {
    migrateSqlite(db.orm, { migrationsFolder: MIGRATIONS_FOLDERS.sqlite });
    return;
  }
  // Several processes may start at once on one database: they take turns, and the later ones
  // find nothing left to apply.
  const lock = await db.pool.connect();
  try {
    await lock.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    await migratePostgres(db.orm, { migrationsFolder: MIGRATIONS_FOLDERS.postgres });
  } finally {
    await lock.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => {});
    lock.release();
  }
}

/**
 * Runs `work` in one SQLite write transaction (BEGIN IMMEDIATE: takes the write lock up front, so
 * two processes never deadlock upgrading a read lock) and commits, or rolls back if it throws.
 *
 * `work` must be synchronous: use drizzle's `.run()`, `.all()`, `.get()` on `tx`. The process
 * has one connection, so a transaction that awaited would let other requests' statements run
 * inside it. Keep this inside repository functions, which stay async outwardly.
 */
export async function withTransaction<T>(
  db: SqliteDb,
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

const MAX_TRANSACTION_ATTEMPTS = 10;

/**
 * Runs `work` in one PostgreSQL transaction at SERIALIZABLE isolation: it behaves as if no other
 * transaction ran at the same time, as SQLite's single writer does, so the repositories' read,
 * check, write sequences hold across processes without row locks of their own. A transaction the
 * server aborts for a conflict with a concurrent one (40001, 40P01) is run again from the start.
 */
export async function withPostgresTransaction<T>(
  db: PostgresDb,
  work: (tx: PostgresTransaction) => Promise<T>,
): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await db.orm.transaction(work, { isolationLevel: 'serializable' });
    } catch (error) {
      if (attempt >= MAX_TRANSACTION_ATTEMPTS || !isConcurrencyConflict(error)) throw error;
      // A little jitter so the transactions that collided do not collide again.
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 5 * attempt));
    }
  }
}

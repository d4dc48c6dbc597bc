// Opens the database named by a DATABASE_URL: SQLite (a file path or `:memory:`, the embedded
// default; sqlite-open.ts) or PostgreSQL (`postgres://...`, for several server processes on one
// database). Repositories run their queries through portable-sql.ts, so handlers call the same
// functions whichever it is; what the two spell differently they take from the handle's
// `spelling` (spelling.ts; what stays per backend by design is listed in docs/architecture.md).

import pg from 'pg';
import { POSTGRES_SPELLING, type Spelling } from './spelling.js';
import { openSqlite, type SqliteDb } from './sqlite-open.js';

export interface PostgresDb {
  kind: 'postgres';
  spelling: Spelling;
  /**
   * Everything but list reads: authentication's key lookup, writes, session routing, gets by id,
   * idempotency. List reads never take these connections, so these never wait behind one.
   */
  pool: pg.Pool;
  /** List reads (runListRead): the reads a client can make slow. `pool` itself at a size of 1. */
  listPool: pg.Pool;
  /**
   * Short reads a streaming replica may answer (runReadSteps): the version a list's kept answers
   * are checked against, read where the list itself is. `pool` on the primary's handle; the
   * replica's own in ReplicaReads.view.
   */
  readPool: pg.Pool;
  /** How long a list read may run before PostgreSQL cancels it (0: no limit). */
  listQueryTimeoutMs: number;
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
pg.types.setTypeParser(pg.types.builtins.INT8, Number);

export interface DbOptions {
  /** PostgreSQL connections this process may open, list reads' and the others' together. */
  poolSize?: number;
  /**
   * How long a list read may run before it is stopped with a QueryTimeoutError (absent or 0: no
   * limit): each PostgreSQL list read, and a SQLite reader thread's job.
   */
  listQueryTimeoutMs?: number;
  /** What `pg_stat_activity` names the connections: `agentline` (the server's) by default. */
  applicationName?: string;
}

/**
 * How a PostgreSQL pool of `total` connections is shared: half (rounded down) for list reads,
 * the rest for everything else. A single connection cannot be split: then both use it.
 */
export function splitPoolSize(total: number): { lists: number; others: number } | null {
  const lists = Math.floor(total / 2);
  return lists === 0 ? null : { lists, others: total - lists };
}

export function createDb(databaseUrl: string, options: DbOptions = {}): Db {
  return isPostgresUrl(databaseUrl)
    ? openPostgres(databaseUrl, options)
    : openSqlite(databaseUrl, options.listQueryTimeoutMs);
}

/** A pool of at most `max` connections to `databaseUrl`, named `applicationName` on the server. */
export function postgresPool(databaseUrl: string, max: number, applicationName: string): pg.Pool {
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max,
    // Names the connections in pg_stat_activity, for the operator.
    application_name: applicationName,
  });
  // An idle connection the server drops (a restart) must not crash the process: the pool
  // replaces it, and the next query reports the outage as a 503.
  pool.on('error', () => {});
  return pool;
}

/** A server's connections to one PostgreSQL server: list reads' and the others'. */
export interface SplitPools {
  /** Everything but list reads. */
  pool: pg.Pool;
  /** List reads; `pool` itself when `total` is 1. */
  listPool: pg.Pool;
  end: () => Promise<void>;
}

/** How `pg_stat_activity` names the list pool of the pools named `applicationName`. */
export const listPoolName = (applicationName: string) => `${applicationName} lists`;

/**
 * `total` connections to `databaseUrl` as splitPoolSize shares them. Each pool serves its callers
 * in arrival order, so list reads, which a client can make slow, get their own connections:
 * session routing and authentication never queue behind a stranger's search.
 */
export function splitPools(
  databaseUrl: string,
  total: number,
  applicationName: string,
): SplitPools {
  const split = splitPoolSize(total);
  const pool = postgresPool(databaseUrl, split?.others ?? 1, applicationName);
  const listPool = split
    ? postgresPool(databaseUrl, split.lists, listPoolName(applicationName))
    : pool;
  return {
    pool,
    listPool,
    end: async () => {
      await Promise.all([pool.end(), listPool === pool ? undefined : listPool.end()]);
    },
  };
}

function openPostgres(databaseUrl: string, options: DbOptions): PostgresDb {
  // Several server processes share one PostgreSQL server: each keeps its pools small.
  const { pool, listPool, end } = splitPools(
    databaseUrl,
    options.poolSize ?? 10,
    options.applicationName ?? 'agentline',
  );
  return {
    kind: 'postgres',
    spelling: POSTGRES_SPELLING,
    pool,
    listPool,
    readPool: pool,
    listQueryTimeoutMs: options.listQueryTimeoutMs ?? 0,
    close: end,
  };
}

/**
 * Sets up the server's own SQLite connection, once migrated, for the writes of its requests:
 * - the statement journals of the savepoints each group commit opens (write-batcher.ts) stay in
 *   memory instead of being written page by page to a temporary file (a seventh of a routed
 *   session's CPU time went to those writes); SQLite drops a savepoint's part of the journal when
 *   the savepoint is released, so it holds one session's pages at a time, however large the batch;
 * - the page cache is 2 MB (SQLite's own default), smaller than openSqlite's: a commit that split
 *   a B-tree page ends with SQLite walking the whole cache's hash table, which with the larger
 *   cache cost each routed session more than the cached pages saved (they are in the operating
 *   system's cache).
 * Migrations run before this, so their index builds still sort through temporary files.
 * docs/benchmarks.md ("Figures behind the code") has the profiles.
 */
export function prepareServerConnection(db: Db): void {
  if (db.kind !== 'sqlite') return;
  db.sqlite.pragma('temp_store = MEMORY');
  db.sqlite.pragma('cache_size = -2000');
}

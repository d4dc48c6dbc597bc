// Opens the database named by a DATABASE_URL: SQLite (a file path or `:memory:`, the embedded
// default) or PostgreSQL (`postgres://...`, for several server processes on one database).
// Repositories run their queries through portable-sql.ts, so handlers call the same functions
// whichever it is; what the two spell differently they take from the handle's `spelling`, below
// (what stays per backend by design is listed in docs/architecture.md).

import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { Column, is, sql, type SQL, type SQLWrapper } from 'drizzle-orm';
import pg from 'pg';
import { Database } from './sqlite-driver.js';

export interface SqliteDb {
  kind: 'sqlite';
  /** How queries spell what the two databases spell differently (Spelling, below). */
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

/**
 * Whether PostgreSQL runs the hot statements as named prepared statements (portable-sql.ts
 * `prepared`): unless DATABASE_PREPARED_STATEMENTS is `false`, which a pooler in transaction mode
 * needs (PgBouncer before 1.21 does not carry them between a client's transactions). Read here,
 * where every process that opens PostgreSQL passes (the server, its webhook thread, the CLI);
 * config.ts refuses a value other than true or false at start.
 */
export const PREPARED_STATEMENTS = process.env.DATABASE_PREPARED_STATEMENTS !== 'false';

// count(*) and bigint ids arrive as int8, which node-postgres leaves as strings (they may exceed
// 2^53). Agentline's counts and ids stay far below that, so they are read as numbers everywhere.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));

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
    : openSqlite(databaseUrl, options);
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
    ? postgresPool(databaseUrl, split.lists, `${applicationName} lists`)
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

/**
 * How long a write waits for another connection's write lock before it fails as a busy database
 * (a 503): the CLI next to a running server, or a second server process, holds it for a commit.
 */
export const SQLITE_BUSY_TIMEOUT_MS = 5000;

/**
 * The write-ahead log's size on disk once SQLite starts it again from its first byte. It holds a
 * few MB while the server serves, but an import outruns the checkpoints and leaves it hundreds of
 * MB long (771 MB after 100,000 events beside a live server); SQLite reuses such a file without
 * shrinking it, so without this limit the disk stays taken until the last connection closes.
 */
export const WAL_SIZE_LIMIT_BYTES = 64 * 1024 * 1024;

/** A SQLite database file (created if missing) or `:memory:`. */
export function openSqlite(databaseUrl: string, options: DbOptions = {}): SqliteDb {
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
  const listQueryTimeoutMs = options.listQueryTimeoutMs ?? 0;
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

// Everything SQLite and PostgreSQL spell differently, in one place: repositories write each query
// once and take these pieces from `db.spelling`; no repository tests which database it is for a
// spelling.

export interface JsonField {
  /** The key: one of the code's own names, written into the SQL as a literal. */
  name: string;
  value: SQLWrapper;
  /** The value holds JSON: embedded as such, not quoted as a string. */
  isJson: boolean;
}

export interface Spelling {
  /**
   * Case-insensitive substring match, with LIKE's wildcards in `value` matched literally. SQLite's
   * LIKE folds ASCII case only; so does PostgreSQL's ILIKE on the "C"-collated columns, and its
   * pg_trgm indexes serve it.
   */
  contains(column: SQLWrapper, value: string): SQL;
  /**
   * A JSON column as the text it was stored as, searched and ordered byte by byte: SQLite keeps
   * JSON as text; PostgreSQL's json type keeps the text verbatim, and "C" orders it as SQLite does.
   */
  jsonText(column: SQLWrapper): SQL;
  /** `values` joined with `separator` in `order`: group_concat, or string_agg. */
  joined(values: SQLWrapper, separator: string, order: SQLWrapper): SQL;
  /**
   * One ORDER BY term with NULL first ascending and last descending, as SQLite has it. PostgreSQL's
   * default is the opposite, so there it is spelled out, except for a NOT NULL column: its planner
   * does not know that the clause changes nothing there, and would sort rather than walk an index.
   */
  orderTerm(column: SQLWrapper, direction: 'asc' | 'desc'): SQL;
  /** A JSON object of these fields, as text. */
  jsonObject(fields: readonly JsonField[]): SQL;
  /**
   * `WITH RECURSIVE name(column) AS (anchor UNION ALL step) select`, evaluated only until `limit`
   * rows: SQLite takes the LIMIT inside the recursion; PostgreSQL refuses it there and evaluates a
   * recursion only as far as the outer query reads it.
   */
  limitedRecursion(cte: SQL, anchor: SQL, step: SQL, select: SQL, limit: number): SQL;
}

function containsPattern(value: string): string {
  return `%${value.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/**
 * A string literal written into the SQL, for the code's own constants (JSON keys, separators):
 * as a bound parameter PostgreSQL could not always infer its type in these functions.
 */
function literal(text: string): SQL {
  return sql.raw(`'${text.replaceAll("'", "''")}'`);
}

function fieldList(fields: readonly JsonField[], value: (field: JsonField) => SQL): SQL {
  return sql.join(
    fields.map((field) => sql`${literal(field.name)}, ${value(field)}`),
    sql`, `,
  );
}

function direction(value: 'asc' | 'desc'): SQL {
  return sql.raw(value === 'asc' ? 'ASC' : 'DESC');
}

export const SQLITE_SPELLING: Spelling = {
  contains: (column, value) => sql`${column} LIKE ${containsPattern(value)} ESCAPE '\\'`,
  jsonText: (column) => sql`${column}`,
  joined: (values, separator, order) =>
    sql`group_concat(${values}, ${literal(separator)} ORDER BY ${order})`,
  orderTerm: (column, order) => sql`${column} ${direction(order)}`,
  // SQLite keeps JSON as text: json() marks it as JSON for json_object.
  jsonObject: (fields) =>
    sql`json_object(${fieldList(fields, ({ value, isJson }) => (isJson ? sql`json(${value})` : sql`${value}`))})`,
  limitedRecursion: (cte, anchor, step, select, limit) =>
    sql`WITH RECURSIVE ${cte} AS (${anchor} UNION ALL ${step} LIMIT ${limit}) ${select}`,
};

export const POSTGRES_SPELLING: Spelling = {
  contains: (column, value) => sql`${column} ILIKE ${containsPattern(value)} ESCAPE '\\'`,
  jsonText: (column) => sql`(${column}::text COLLATE "C")`,
  joined: (values, separator, order) =>
    sql`string_agg(${values}, ${literal(separator)} ORDER BY ${order})`,
  orderTerm: (column, order) => {
    if (is(column, Column) && column.notNull) return sql`${column} ${direction(order)}`;
    return sql`${column} ${direction(order)} ${sql.raw(order === 'asc' ? 'NULLS FIRST' : 'NULLS LAST')}`;
  },
  // Spelled out rather than json_build_object, whose text puts spaces around every `:` and after
  // every `,`: the same item is then the same bytes as SQLite's compact json_object (to_json
  // escapes as SQLite does; a json column is embedded as stored).
  jsonObject: (fields) =>
    sql`(${sql.join(
      [
        ...fields.flatMap(({ name, value, isJson }, index) => [
          literal(`${index === 0 ? '{' : ','}${JSON.stringify(name)}:`),
          isJson
            ? sql`coalesce(${value}::text, 'null')`
            : sql`coalesce(to_json(${value})::text, 'null')`,
        ]),
        literal('}'),
      ],
      sql` || `,
    )})`,
  limitedRecursion: (cte, anchor, step, select, limit) =>
    sql`WITH RECURSIVE ${cte} AS (${anchor} UNION ALL ${step}) ${select} LIMIT ${limit}`,
};

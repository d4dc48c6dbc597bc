// The one way repositories reach either database: it renders their drizzle `sql` templates for
// SQLite or PostgreSQL, runs them on the drivers' public APIs, and drives a repository's read,
// check, write sequences (`Steps`) on both (docs/architecture.md, "The SQL runner").

import {
  getTableColumns,
  is,
  Placeholder,
  sql,
  type SQL,
  type SQLWrapper,
  type Table,
} from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import { SQLiteSyncDialect } from 'drizzle-orm/sqlite-core';
import type { Statement } from 'better-sqlite3';
import type pg from 'pg';
import type { Db } from './client.js';
import type { SqliteDb } from './sqlite-open.js';
import { isConcurrencyConflict, QueryTimeoutError } from './errors.js';
import { inWriteTransaction } from './sqlite-write-lock.js';
import { perDatabase, remember } from './caches.js';

export type Row = Record<string, unknown>;

/** A statement rendered once per backend and run many times with new values (see `prepared`). */
interface PreparedStatement {
  /** Unique in the process: PostgreSQL prepares it under this name on each connection. */
  name: string;
  sql: SQL;
  rendered: { sqlite?: RenderedSql; postgres?: RenderedSql };
}

interface RenderedSql {
  sql: string;
  params: unknown[];
}

type Query = { sql: SQL } | { statement: PreparedStatement; values: Record<string, unknown> };

export type Steps<T> = Generator<Query, T, Row[]>;

/** A SELECT, or a write with RETURNING: its rows, typed as the caller's aliases promise. */
export function* selectRows<R>(query: SQL): Generator<Query, R[], Row[]> {
  return (yield { sql: query }) as R[];
}

/** A write without RETURNING. */
export function* execute(query: SQL): Generator<Query, void, Row[]> {
  yield { sql: query };
}

/**
 * Whether the hot statements run as named prepared statements on PostgreSQL (`prepared`): not
 * when DATABASE_PREPARED_STATEMENTS is `false`, as a pooler in transaction mode needs (PgBouncer
 * before 1.21 does not carry them between a client's transactions); config.ts refuses others.
 */
export const PREPARED_STATEMENTS = process.env.DATABASE_PREPARED_STATEMENTS !== 'false';

/**
 * A statement for a hot path, with its values as `sql.placeholder(key)`. Building and rendering a
 * query costs more than running it there, so it is rendered once per backend; SQLite prepares it
 * once per database, and each PostgreSQL connection parses and plans it once, as a named
 * prepared statement (planning the routing read took longer than running it), unless
 * PREPARED_STATEMENTS is false: behind a pooler in transaction mode, the next transaction may run
 * on a server connection that never saw the name, or that another client already prepared it on.
 */
let preparedCount = 0;

export function prepared<R>(
  query: SQL,
): (values: Record<string, unknown>) => Generator<Query, R[], Row[]> {
  preparedCount += 1;
  const statement: PreparedStatement = {
    name: `agentline_${preparedCount}`,
    sql: query,
    rendered: {},
  };
  return function* (values): Generator<Query, R[], Row[]> {
    return (yield { statement, values }) as R[];
  };
}

const DIALECTS = { sqlite: new SQLiteSyncDialect(), postgres: new PgDialect() };

/** `query` as `kind`'s text and the values it binds. */
export function renderedSql(query: SQL, kind: Db['kind']): RenderedSql {
  return DIALECTS[kind].sqlToQuery(query);
}

function render(query: Query, kind: Db['kind']): RenderedSql & { name?: string } {
  if ('sql' in query) return renderedSql(query.sql, kind);
  const { statement, values } = query;
  const rendered = (statement.rendered[kind] ??= renderedSql(statement.sql, kind));
  return {
    name: PREPARED_STATEMENTS ? statement.name : undefined,
    sql: rendered.sql,
    params: rendered.params.map((param) => (is(param, Placeholder) ? values[param.name] : param)),
  };
}

/**
 * Statements kept prepared per SQLite database; past this many, the one used longest ago goes.
 * Each holds memory, and clients choose list shapes (filters, orders, fields) freely: the bound
 * keeps what many distinct shapes can take small (docs/benchmarks.md, "Figures behind the code"),
 * while the shapes in use stay prepared.
 */
const MAX_SQLITE_STATEMENTS = 1_000;

const sqliteStatements = perDatabase((_db: SqliteDb) => new Map<string, Statement>());

// Every query shape is one SQL text with its values bound, so it is prepared once.
function sqliteStatement(db: SqliteDb, text: string): Statement {
  const cache = sqliteStatements(db);
  const statement = cache.get(text) ?? db.sqlite.prepare(text);
  remember(cache, text, statement, MAX_SQLITE_STATEMENTS);
  return statement;
}

/**
 * Runs `steps` to the end on SQLite's one connection, synchronously: inside a transaction of the
 * caller's (a group commit), or with each statement committing on its own.
 */
export function runStepsOnSqlite<T>(db: SqliteDb, steps: Steps<T>): T {
  let next = steps.next();
  while (!next.done) {
    const { sql: text, params } = render(next.value, 'sqlite');
    const statement = sqliteStatement(db, text);
    let rows: Row[] = [];
    if (statement.reader) rows = statement.all(...params) as Row[];
    else statement.run(...params);
    next = steps.next(rows);
  }
  return next.value;
}

/** `beforeStatement` runs before each statement but the first (see listReadBudget). */
async function runStepsOnPostgres<T>(
  runner: pg.Pool | pg.PoolClient,
  steps: Steps<T>,
  beforeStatement?: () => Promise<void>,
): Promise<T> {
  let next = steps.next();
  for (let first = true; !next.done; first = false) {
    const { name, sql: text, params: values } = render(next.value, 'postgres');
    if (!first) await beforeStatement?.();
    const result = await runner.query<Row>(name ? { name, text, values } : { text, values });
    next = steps.next(result.rows);
  }
  return next.value;
}

// Built once per database: better-sqlite3 builds a transaction's wrapper functions on each call of
// transaction(), which cost a short request more than beginning and committing it.
const sqliteTransaction = perDatabase((db: SqliteDb) =>
  db.sqlite.transaction((steps: Steps<unknown>) => runStepsOnSqlite(db, steps)),
);

const MAX_TRANSACTION_ATTEMPTS = 10;

/**
 * Runs steps on one connection of `pool` between `begin` and COMMIT, first taking the turns of
 * `holding` (beginTakingTurns). A transaction the server aborts for a conflict with a concurrent one
 * (40001, 40P01) runs again from the start. ROLLBACK after any failure (a cancelled statement too)
 * also undoes a SET LOCAL and lets go of the turns, so the connection goes back to the pool as it
 * came: nothing outlasts the transaction, as PgBouncer in transaction mode requires.
 */
async function inPostgresTransaction<T>(
  pool: pg.Pool,
  begin: string,
  start: () => Steps<T>,
  budget?: () => Budget,
  holding?: readonly AdvisoryLock[],
): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    const client = await pool.connect();
    let broken: Error | undefined;
    try {
      if (holding?.length) await beginTakingTurns(client, begin, holding);
      else await client.query(begin);
      const spend = budget?.();
      const result = await runStepsOnPostgres(client, start(), spend && (() => spend(client)));
      await client.query('COMMIT');
      return result;
    } catch (error) {
      // A connection that cannot even roll back is not handed to the next request.
      await client.query('ROLLBACK').catch((rollbackError: Error) => (broken = rollbackError));
      if (attempt >= MAX_TRANSACTION_ATTEMPTS || !isConcurrencyConflict(error)) throw error;
    } finally {
      client.release(broken);
    }
    // A little jitter so the transactions that collided do not collide again.
    await new Promise((resolve) => setTimeout(resolve, Math.random() * 5 * attempt));
  }
}

/** Runs a sequence outside a transaction (each statement commits on its own). */
export async function runSteps<T>(db: Db, start: () => Steps<T>): Promise<T> {
  return db.kind === 'sqlite'
    ? runStepsOnSqlite(db, start())
    : runStepsOnPostgres(db.pool, start());
}

/**
 * Runs a sequence of reads outside a transaction, on the handle's read pool: the replica's for a
 * list read the replica serves (ReplicaReads.view), so that what it reads is of the same data as
 * the list. Otherwise as runSteps.
 */
export async function runReadSteps<T>(db: Db, start: () => Steps<T>): Promise<T> {
  return db.kind === 'sqlite'
    ? runStepsOnSqlite(db, start())
    : runStepsOnPostgres(db.readPool, start());
}

/**
 * Runs a sequence that writes, for a server request or timer: as runSteps on PostgreSQL; on
 * SQLite in a write transaction that waits for another process's write lock without stopping the
 * event loop (sqlite-write-lock.ts), where runSteps would sleep in SQLite's busy handler.
 */
export async function runWriteSteps<T>(db: Db, start: () => Steps<T>): Promise<T> {
  return db.kind === 'sqlite'
    ? inWriteTransaction(db, () => runStepsOnSqlite(db, start()))
    : runStepsOnPostgres(db.pool, start());
}

/** A PostgreSQL advisory lock (two-key form): a class of locks, and the key of one. */
export interface AdvisoryLock {
  lockClass: number;
  key: number;
}

/**
 * Begins a transaction and takes the locks, transaction-scoped, in its first statement. A
 * SERIALIZABLE transaction sees the rows committed before its first query started (PostgreSQL's
 * SET TRANSACTION page), a lock's wait included: one that waited inside for a lock would miss the
 * holder's commit and fail (40001), again and again under steady load. So a lock is only tried
 * there; when another holds it, the transaction rolls back, waits for it in a statement of its
 * own (which takes it and lets it go at once) and begins again, and writers of one shared row (a
 * capped experiment's count, an organization's event counts) take turns. A holder that commits
 * between the try's snapshot and its lock makes a conflict, run again as any other. Never a
 * session lock: behind PgBouncer in transaction mode its unlock could reach another server
 * connection, and another client the lock.
 */
async function beginTakingTurns(
  client: pg.PoolClient,
  begin: string,
  locks: readonly AdvisoryLock[],
): Promise<void> {
  // The begin and every try in one round trip: the simple query protocol takes the two statements
  // together but no parameters, so the locks' integers are written into the text.
  const tries = locks.map(
    (lock) => `pg_try_advisory_xact_lock(${int4(lock.lockClass)}, ${int4(lock.key)})`,
  );
  for (;;) {
    const [, tried] = (await client.query(
      `${begin}; SELECT ARRAY[${tries.join(', ')}] AS taken`,
    )) as unknown as [pg.QueryResult, pg.QueryResult<{ taken: boolean[] }>];
    const busyAt = tried.rows[0]!.taken.indexOf(false);
    if (busyAt === -1) return;
    // The others it took go with the ROLLBACK.
    const busy = locks[busyAt]!;
    await client.query('ROLLBACK');
    await client.query('SELECT pg_advisory_xact_lock($1, $2)', [busy.lockClass, busy.key]);
  }
}

/** `value` as SQL text, if it is an integer PostgreSQL's int4 holds. */
function int4(value: number): string {
  if (!Number.isInteger(value) || value < -(2 ** 31) || value >= 2 ** 31) {
    throw new RangeError(`an advisory lock's class and key are int4 integers, not ${value}`);
  }
  return String(value);
}

/**
 * Runs a sequence in one write transaction: SQLite's BEGIN IMMEDIATE (takes the write lock up
 * front, so two processes never deadlock upgrading a read lock); PostgreSQL's SERIALIZABLE (it
 * behaves as if no other transaction ran at the same time, as SQLite's single writer does, so the
 * repositories' read, check, write sequences hold across processes without row locks of their own).
 * `turns`: transaction-scoped advisory locks PostgreSQL's transaction takes before any other
 * statement (beginTakingTurns), so writers of one shared row wait for each other instead of
 * failing; SQLite's one writer needs none.
 */
export async function runStepsInTransaction<T>(
  db: Db,
  start: () => Steps<T>,
  turns: readonly AdvisoryLock[] = [],
): Promise<T> {
  if (db.kind === 'postgres') {
    return inPostgresTransaction(
      db.pool,
      'BEGIN ISOLATION LEVEL SERIALIZABLE',
      start,
      undefined,
      turns,
    );
  }
  return inWriteTransaction(db, () => runStepsOnSqlite(db, start()));
}

/** Checks, before a statement of a transaction, that it may still run (listReadBudget). */
type Budget = (client: pg.PoolClient) => Promise<void>;

/**
 * Keeps a PostgreSQL list read's statements, together, within `timeoutMs` of its start. The
 * first runs under the `statement_timeout` its BEGIN set; before each later one, the time left
 * is checked without a round trip, and the timeout lowered to it once a fifth or more of the
 * budget is gone (a fast read, the usual one, never pays for the SET). A read past its time
 * stops with QueryTimeoutError, a statement past it with PostgreSQL's 57014.
 */
function listReadBudget(timeoutMs: number): Budget {
  const startedAt = performance.now();
  let statementTimeoutMs = timeoutMs;
  return async (client) => {
    const leftMs = Math.floor(timeoutMs - (performance.now() - startedAt));
    if (leftMs <= 0) throw new QueryTimeoutError(timeoutMs);
    if (leftMs < statementTimeoutMs * 0.8) {
      await client.query(`SET LOCAL statement_timeout = ${leftMs}`);
      statementTimeoutMs = leftMs;
    }
  };
}

/**
 * A list read runs in its own backend only: no parallel workers. A slow read (a substring search
 * over every event) otherwise brings two more processes to its sequential scan, and a few of them
 * take every core of the database server from the other organizations' requests.
 */
const ONE_BACKEND_PER_READ = 'SET LOCAL max_parallel_workers_per_gather = 0';

/**
 * Runs a list read: a sequence of reads that must see one snapshot (a page and its count), and
 * that a client can make slow (a substring search, a deep page). On PostgreSQL it runs on the
 * list pool, in a read-only transaction bounded by the database's list query timeout (a 422
 * query_timeout for the caller, http/errors.ts); on SQLite in a deferred transaction (the events
 * list's reader threads have their own timeout, runtime/event-readers.ts).
 */
export async function runListRead<T>(db: Db, start: () => Steps<T>): Promise<T> {
  if (db.kind === 'sqlite') return sqliteTransaction(db).deferred(start()) as T;
  const timeoutMs = db.listQueryTimeoutMs;
  const begin = `BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; ${ONE_BACKEND_PER_READ}`;
  if (timeoutMs <= 0) return inPostgresTransaction(db.listPool, begin, start);
  // One round trip: the simple query protocol takes both statements at once.
  return inPostgresTransaction(
    db.listPool,
    `${begin}; SET LOCAL statement_timeout = ${timeoutMs}`,
    start,
    () => listReadBudget(timeoutMs),
  );
}

/**
 * An id from a request, compared as bigint: PostgreSQL's integer columns end at 2^31 - 1, and a
 * larger parameter would fail to bind there instead of matching nothing, as it does on SQLite.
 */
export function idParam(id: number | Placeholder): SQL {
  return sql`CAST(${id} AS BIGINT)`;
}

/** `column = id` for an id from a request (see idParam). */
export function idEquals(column: SQLWrapper, id: number | Placeholder): SQL {
  return sql`${column} = ${idParam(id)}`;
}

/** `column IN (ids)` for ids from a request (see idParam); never empty SQL, even for no ids. */
export function idIn(column: SQLWrapper, ids: readonly number[]): SQL {
  if (ids.length === 0) return sql`FALSE`;
  return sql`${column} IN (${sql.join(ids.map(idParam), sql`, `)})`;
}

/** A select list `expression AS "alias", ...`, so both backends name the result columns alike. */
export function selectList(fields: Record<string, SQLWrapper>): SQL {
  return sql.join(
    Object.entries(fields).map(([alias, field]) => sql`${field} AS ${sql.identifier(alias)}`),
    sql`, `,
  );
}

/**
 * Every column of `table` but `except`, each named by its TypeScript key, as the table's
 * `$inferSelect` type has them (JSON columns arrive as text on SQLite: see parsedJson).
 */
export function columnsOf<T extends Table>(
  table: T,
  except: ReadonlyArray<keyof T['$inferSelect']> = [],
): SQL {
  const columns = Object.entries(getTableColumns(table)).filter(
    ([key]) => !except.includes(key as keyof T['$inferSelect']),
  );
  return selectList(Object.fromEntries(columns));
}

// A boolean as SQL both backends read: SQLite stores 0 and 1 and reads TRUE and FALSE as those,
// PostgreSQL has a boolean type; better-sqlite3 cannot bind a JavaScript boolean. Other values
// (text, numbers, null, placeholders) are bound as parameters.
export function valueSql(value: unknown): SQL {
  if (typeof value === 'boolean') return value ? sql`TRUE` : sql`FALSE`;
  return sql`${value}`;
}

type Values<T extends Table> = { [K in keyof T['$inferInsert']]?: unknown };

// INSERT's column list and UPDATE's SET take bare column names (a qualified name is an error on
// both backends), so these name them from the table's TypeScript keys.
function columnName<T extends Table>(table: T, key: string): SQL {
  const column = getTableColumns(table)[key];
  if (!column) throw new Error(`${key} is not a column of this table`);
  return sql`${sql.identifier(column.name)}`;
}

/** `(columns) VALUES (...), (...)` for an INSERT; every row has the first row's keys. */
export function insertValues<T extends Table>(table: T, rows: ReadonlyArray<Values<T>>): SQL {
  const keys = Object.keys(rows[0] ?? {}) as Array<keyof Values<T> & string>;
  const columns = sql.join(
    keys.map((key) => columnName(table, key)),
    sql`, `,
  );
  const tuples = rows.map((row) =>
    sql.join(
      keys.map((key) => valueSql(row[key])),
      sql`, `,
    ),
  );
  return sql`(${columns}) VALUES (${sql.join(tuples, sql`), (`)})`;
}

/** `column = value, ...` for an UPDATE's SET. */
export function setValues<T extends Table>(table: T, values: Values<T>): SQL {
  return sql.join(
    Object.entries(values).map(
      ([key, value]) => sql`${columnName(table, key)} = ${valueSql(value)}`,
    ),
    sql`, `,
  );
}

/**
 * A value for a JSON column, as text: SQLite stores JSON so and PostgreSQL reads it into json
 * (better-sqlite3 cannot bind an object).
 */
export function jsonText(value: object): string;
export function jsonText(value: object | null): string | null;
export function jsonText(value: object | null): string | null {
  return value === null ? null : JSON.stringify(value);
}

/** A JSON column's value as SQLite returns it (text) or PostgreSQL does (already parsed). */
export function parsedJson<T>(value: T | string): T {
  return typeof value === 'string' ? (JSON.parse(value) as T) : value;
}

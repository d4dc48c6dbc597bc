// Queries written once for both backends. Drizzle `sql` templates that reference the SQLite
// schema's tables and columns render in either dialect; the helpers below cover what the two
// spell differently (booleans, ids beyond PostgreSQL's integer, INSERT and UPDATE column lists).
//
// A repository's read, check, write sequence is a generator that yields those queries and gets
// their rows back. On SQLite it is driven synchronously, as withTransaction's work must be (the
// process has one connection); on PostgreSQL each query is awaited inside
// withPostgresTransaction, which may run the whole sequence again after a conflict, so it is
// passed as a function that starts it.

import {
  getTableColumns,
  sql,
  type Placeholder,
  type SQL,
  type SQLWrapper,
  type Table,
} from 'drizzle-orm';
import {
  withPostgresTransaction,
  withTransaction,
  type Db,
  type PostgresOrm,
  type PostgresTransaction,
  type SqliteOrm,
  type SqliteTransaction,
} from './client.js';

export type Row = Record<string, unknown>;

interface Query {
  sql: SQL;
  /** False for a write without RETURNING, which better-sqlite3 runs rather than reads. */
  returnsRows: boolean;
}

export type Steps<T> = Generator<Query, T, Row[]>;

/** A SELECT, or a write with RETURNING: its rows, typed as the caller's aliases promise. */
export function* selectRows<R>(query: SQL): Generator<Query, R[], Row[]> {
  return (yield { sql: query, returnsRows: true }) as R[];
}

/** A write without RETURNING. */
export function* execute(query: SQL): Generator<Query, void, Row[]> {
  yield { sql: query, returnsRows: false };
}

function driveOnSqlite<T>(runner: SqliteOrm | SqliteTransaction, steps: Steps<T>): T {
  let next = steps.next();
  while (!next.done) {
    const query = next.value;
    if (query.returnsRows) next = steps.next(runner.all<Row>(query.sql));
    else {
      runner.run(query.sql);
      next = steps.next([]);
    }
  }
  return next.value;
}

/** Runs `steps` on PostgreSQL, awaiting each query on `runner` (a pool or a transaction). */
export async function driveOnPostgres<T>(
  runner: PostgresOrm | PostgresTransaction,
  steps: Steps<T>,
): Promise<T> {
  let next = steps.next();
  while (!next.done) next = steps.next((await runner.execute<Row>(next.value.sql)).rows);
  return next.value;
}

/** Runs a sequence outside a transaction (each statement commits on its own). */
export async function runSteps<T>(db: Db, start: () => Steps<T>): Promise<T> {
  return db.kind === 'sqlite' ? driveOnSqlite(db.orm, start()) : driveOnPostgres(db.orm, start());
}

/** Runs a sequence in one write transaction (SQLite's BEGIN IMMEDIATE, PostgreSQL's SERIALIZABLE). */
export async function runStepsInTransaction<T>(db: Db, start: () => Steps<T>): Promise<T> {
  if (db.kind === 'postgres')
    return withPostgresTransaction(db, (tx) => driveOnPostgres(tx, start()));
  // withTransaction refuses work typed as a promise; T is never one here, as the steps are sync.
  return withTransaction<unknown>(db, (tx) => driveOnSqlite(tx, start())) as Promise<T>;
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

/** A JSON column's value as SQLite returns it (text) or PostgreSQL does (already parsed). */
export function parsedJson<T>(value: T | string): T {
  return typeof value === 'string' ? (JSON.parse(value) as T) : value;
}

// Hot paths (auth, session routing) run prepared statements built once: building a drizzle query
// and preparing it costs more than running it. On SQLite they are prepared per database handle;
// on PostgreSQL a statement is rendered to text once and prepared by name on each connection.

import { is, Placeholder, type SQL } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import { SQLiteSyncDialect } from 'drizzle-orm/sqlite-core';
import type { QueryResult, QueryResultRow } from 'pg';
import type { Db, PostgresOrm, PostgresTransaction, SqliteDb } from './client.js';

/** Memoises `build` per database handle (of one backend, when `build` takes a narrower type). */
export function perDatabase<D extends Db, T>(build: (db: D) => T): (db: D) => T {
  const cache = new WeakMap<D, T>();
  return (db) => {
    let built = cache.get(db);
    if (built === undefined) {
      built = build(db);
      cache.set(db, built);
    }
    return built;
  };
}

const postgresDialect = new PgDialect();

/**
 * A PostgreSQL statement for a hot path, with its values as `sql.placeholder(key)`. Its text is
 * rendered once, and each connection parses and plans it once, as the named prepared statement
 * `name`, instead of on every run: for a routed session, rendering and planning took twice as
 * long as running the statements. The name must be unique in the process.
 */
export function preparedOnPostgres<R extends QueryResultRow>(name: string, query: SQL) {
  const rendered = postgresDialect.sqlToQuery(query);
  return async (
    runner: PostgresOrm | PostgresTransaction,
    values: Record<string, unknown>,
  ): Promise<R[]> => {
    const statement = runner._.session.prepareQuery<{
      execute: QueryResult<R>;
      all: unknown;
      values: unknown;
    }>(rendered, undefined, name, false);
    return (await statement.execute(values)).rows;
  };
}

const sqliteDialect = new SQLiteSyncDialect();

/**
 * A SQLite statement for a hot path, with its values as `sql.placeholder(key)`: rendered once and
 * prepared once per database handle. It must return rows (a SELECT, or a write with RETURNING).
 */
export function preparedOnSqlite<R>(query: SQL) {
  const rendered = sqliteDialect.sqlToQuery(query);
  const statement = perDatabase((db: SqliteDb) => db.sqlite.prepare(rendered.sql));
  return (db: SqliteDb, values: Record<string, unknown>): R[] =>
    statement(db).all(
      ...rendered.params.map((param) => (is(param, Placeholder) ? values[param.name] : param)),
    ) as R[];
}

// The statements a PostgreSQL pool's connections send, or a SQLite handle reads, for tests that
// hold a code path to the round trips it costs, the statements it must not send, or their plans.

import type pg from 'pg';
import type { SqliteDb } from '../../src/db/engine/sqlite-open.js';

/** Records the text of every statement the pool's connections send from now on, in order. */
export function recordStatements(pool: pg.Pool): string[] {
  const sent: string[] = [];
  const recorded = new WeakSet<pg.PoolClient>();
  pool.on('acquire', (client: pg.PoolClient) => {
    if (recorded.has(client)) return;
    recorded.add(client);
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args) => {
      const [statement] = args as [string | { text: string }];
      sent.push(typeof statement === 'string' ? statement : statement.text);
      return query(...args);
    };
  });
  return sent;
}

/** A statement SQLite ran as a read, with its values. */
export interface SqliteRead {
  text: string;
  params: unknown[];
}

/**
 * Records every read the handle runs through statements it prepares from now on, until `stop`.
 * Statements prepared before are not seen (the handle keeps its prepared statements per text).
 */
export function recordSqliteReads(db: SqliteDb): { reads: SqliteRead[]; stop: () => void } {
  const reads: SqliteRead[] = [];
  const prepare = db.sqlite.prepare.bind(db.sqlite);
  db.sqlite.prepare = ((text: string) => {
    const statement = prepare(text);
    const all = statement.all.bind(statement);
    statement.all = (...params: unknown[]) => {
      reads.push({ text, params });
      return all(...params);
    };
    return statement;
  }) as typeof db.sqlite.prepare;
  return { reads, stop: () => (db.sqlite.prepare = prepare) };
}

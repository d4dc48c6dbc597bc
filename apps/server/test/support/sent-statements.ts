// The statements a PostgreSQL pool's connections send, or a SQLite handle reads, for tests that
// hold a code path to the round trips it costs, the statements it must not send, or their plans.

import type { Statement } from 'better-sqlite3';
import type pg from 'pg';
import type { Db } from '../../src/db/engine/client.js';
import type { SqliteDb } from '../../src/db/engine/sqlite-open.js';

/** A statement a PostgreSQL connection sent, or SQLite ran as a read, with its values. */
export interface SentQuery {
  text: string;
  values: unknown[];
}

/** Calls `record` with every statement the pool's connections send from now on, in order. */
function onEachQuery(pool: pg.Pool, record: (query: SentQuery) => void): void {
  const recorded = new WeakSet<pg.PoolClient>();
  pool.on('acquire', (client: pg.PoolClient) => {
    if (recorded.has(client)) return;
    recorded.add(client);
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args) => {
      const [statement, values] = args as [string | { text: string; values?: unknown[] }, unknown];
      record(
        typeof statement === 'string'
          ? { text: statement, values: Array.isArray(values) ? values : [] }
          : { text: statement.text, values: statement.values ?? [] },
      );
      return query(...args);
    };
  });
}

/** Records the text of every statement the pool's connections send from now on, in order. */
export function recordStatements(pool: pg.Pool): string[] {
  const sent: string[] = [];
  onEachQuery(pool, ({ text }) => sent.push(text));
  return sent;
}

/** Records every statement the pool's connections send from now on, with its values. */
export function recordQueries(pool: pg.Pool): SentQuery[] {
  const sent: SentQuery[] = [];
  onEachQuery(pool, (query) => sent.push(query));
  return sent;
}

type StatementCall = 'all' | 'run';

/**
 * Calls `hook` before every call of `methods` (`all`: a read, `run`: a write) that statements of
 * the handle make from now on, until `stop`: those it prepared before too, since the methods are
 * wrapped on better-sqlite3's statement class, for the statements of this handle only.
 */
function beforeSqliteCalls(
  db: SqliteDb,
  methods: readonly StatementCall[],
  hook: (call: SentQuery) => void,
): () => void {
  type Call = (this: Statement, ...values: unknown[]) => unknown;
  const statementClass = Object.getPrototypeOf(db.sqlite.prepare('SELECT 1')) as Record<
    StatementCall,
    Call
  >;
  const originals = methods.map((method) => [method, statementClass[method]] as const);
  for (const [method, call] of originals) {
    statementClass[method] = function (this: Statement, ...values: unknown[]) {
      if (this.database === db.sqlite) hook({ text: this.source, values });
      return call.apply(this, values);
    };
  }
  return () => {
    for (const [method, call] of originals) statementClass[method] = call;
  };
}

/** Records every call of `methods` the handle's statements make from now on, until `stop`. */
function recordSqliteCalls(
  db: SqliteDb,
  methods: readonly StatementCall[],
): { calls: SentQuery[]; stop: () => void } {
  const calls: SentQuery[] = [];
  return { calls, stop: beforeSqliteCalls(db, methods, (call) => calls.push(call)) };
}

/** Makes the handle's next statement fail with `error`, as a database that went away would. */
export function failNextStatement(db: Db, error: Error): void {
  if (db.kind === 'postgres') {
    const query = db.pool.query.bind(db.pool);
    db.pool.query = () => {
      db.pool.query = query;
      return Promise.reject(error);
    };
    return;
  }
  const stop = beforeSqliteCalls(db, ['all', 'run'], () => {
    stop();
    throw error;
  });
}

/** Records every read the handle's statements run from now on, until `stop`. */
export function recordSqliteReads(db: SqliteDb): { reads: SentQuery[]; stop: () => void } {
  const { calls, stop } = recordSqliteCalls(db, ['all']);
  return { reads: calls, stop };
}

/**
 * The statements `work` has the database run, in order: on SQLite the reads and writes of the
 * handle's statements, on PostgreSQL those the write pool's connections sent.
 */
export async function sentStatements(db: Db, work: () => Promise<unknown>): Promise<SentQuery[]> {
  if (db.kind === 'postgres') {
    const sent = recordQueries(db.pool);
    await work();
    return sent;
  }
  const { calls, stop } = recordSqliteCalls(db, ['all', 'run']);
  try {
    await work();
  } finally {
    stop();
  }
  return calls;
}

/**
 * What `read` gives, with the statements it had the database run: on SQLite the reads of the
 * handle's statements, on PostgreSQL those both pools sent.
 */
export async function withStatements<T>(
  db: Db,
  read: () => Promise<T>,
): Promise<{ result: T; statements: SentQuery[] }> {
  if (db.kind === 'sqlite') {
    const { reads, stop } = recordSqliteReads(db);
    try {
      return { result: await read(), statements: reads };
    } finally {
      stop();
    }
  }
  const pools = db.listPool === db.pool ? [db.pool] : [db.listPool, db.pool];
  const sent = pools.map(recordQueries);
  const result = await read();
  return { result, statements: sent.flat() };
}

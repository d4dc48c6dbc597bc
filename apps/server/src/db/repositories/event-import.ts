// The write side of `agentline events import` (the list queries live in events.ts). Import keys
// make it idempotent: a batch inserts only the events whose (organization, import key) is new.

import { sql } from 'drizzle-orm';
import type { Statement } from 'better-sqlite3';
import { EventProperties } from '../../generated/enum-values.js';
import type { Db, PostgresDb } from '../engine/client.js';
import type { SqliteDb } from '../engine/sqlite-open.js';
import { perDatabase } from '../engine/caches.js';
import { runSteps, selectRows } from '../engine/portable-sql.js';

/** One event ready for the events table: timestamp normalised, attributes as JSON text. */
export interface EventToImport {
  importKey: string;
  timestamp: string;
  sessionId: string | null;
  conversationId: string | null;
  source: string | null;
  sourceId: string | null;
  category: string | null;
  type: string | null;
  userId: string | null;
  description: string | null;
  attributes: string | null;
}

/** Rows per multi-row INSERT: one statement call for many rows saves the per-call overhead. */
const ROWS_PER_INSERT = 100;

/** The columns an import fills, in the order of pushParameters. */
const IMPORTED_COLUMNS = ['organization_id', 'import_key', ...EventProperties] as const;

const INSERT_INTO_EVENTS = `INSERT INTO events (${IMPORTED_COLUMNS.join(', ')})`;
const UNLESS_IMPORTED = `ON CONFLICT (organization_id, import_key, timestamp) WHERE import_key IS NOT NULL DO NOTHING`;

function insertRowsStatement(db: SqliteDb, rows: number): Statement {
  const row = `(${IMPORTED_COLUMNS.map(() => '?').join(', ')})`;
  return db.sqlite.prepare(
    `${INSERT_INTO_EVENTS} VALUES ${Array.from({ length: rows }, () => row).join(', ')}
     ${UNLESS_IMPORTED}`,
  );
}

/** Positional parameters: binding by name costs measurably at hundreds of thousands of rows. */
function pushParameters(parameters: unknown[], organizationId: number, event: EventToImport): void {
  parameters.push(
    organizationId,
    event.importKey,
    event.timestamp,
    event.sessionId,
    event.conversationId,
    event.source,
    event.sourceId,
    event.category,
    event.type,
    event.userId,
    event.description,
    event.attributes,
  );
}

// Prepared once per connection: preparing per batch would cost more than the inserts.
const sqliteStatements = perDatabase((db: SqliteDb) => ({
  insertMany: insertRowsStatement(db, ROWS_PER_INSERT),
  insertOne: insertRowsStatement(db, 1),
  // Imported events skip the description index's trigger (migration 0005): indexing the whole
  // batch with one statement is several times faster than one virtual-table insert per row.
  indexBatchDescriptions: db.sqlite.prepare(
    `INSERT INTO events_description_fts (rowid, description)
       SELECT id, description FROM events
       WHERE id > ? AND import_key IS NOT NULL`,
  ),
  highestEventId: db.sqlite.prepare('SELECT coalesce(max(id), 0) FROM events').pluck(),
}));

/** Inserts the events, the new ones only; returns how many were new. */
function insertEventsOnSqlite(
  db: SqliteDb,
  organizationId: number,
  batch: readonly EventToImport[],
): number {
  const { insertMany, insertOne } = sqliteStatements(db);
  let inserted = 0;
  let start = 0;
  for (; start + ROWS_PER_INSERT <= batch.length; start += ROWS_PER_INSERT) {
    const parameters: unknown[] = [];
    for (let i = start; i < start + ROWS_PER_INSERT; i += 1) {
      pushParameters(parameters, organizationId, batch[i]!);
    }
    inserted += insertMany.run(parameters).changes;
  }
  for (; start < batch.length; start += 1) {
    const parameters: unknown[] = [];
    pushParameters(parameters, organizationId, batch[start]!);
    inserted += insertOne.run(parameters).changes;
  }
  return inserted;
}

/** The PostgreSQL type of each imported column's array; attributes travel as JSON text. */
const POSTGRES_ARRAY_TYPES: Record<(typeof IMPORTED_COLUMNS)[number], string> = {
  organization_id: 'int[]',
  import_key: 'text[]',
  timestamp: 'text[]',
  session_id: 'text[]',
  conversation_id: 'text[]',
  source: 'text[]',
  source_id: 'text[]',
  category: 'text[]',
  type: 'text[]',
  user_id: 'text[]',
  description: 'text[]',
  attributes: 'json[]',
};

/**
 * One statement for the whole batch, whatever its size: each column's values travel as one array
 * and unnest turns them back into rows, in order. It matched or beat COPY into a temporary table
 * followed by INSERT ... SELECT (which needs another driver package) and multi-row INSERT ...
 * VALUES (docs/benchmarks.md, "Figures behind the code"): the indexes' upkeep, the trigram
 * index's above all, costs far more than getting the rows to the server.
 */
async function insertEventsOnPostgres(
  db: PostgresDb,
  organizationId: number,
  batch: readonly EventToImport[],
): Promise<number> {
  const parameters: unknown[] = [];
  for (const event of batch) pushParameters(parameters, organizationId, event);
  const width = IMPORTED_COLUMNS.length;
  const arrays = IMPORTED_COLUMNS.map((column, c) => {
    const values = new Array<unknown>(batch.length);
    for (let row = 0; row < batch.length; row += 1) values[row] = parameters[row * width + c];
    return sql`${sql.param(values)}::${sql.raw(POSTGRES_ARRAY_TYPES[column])}`;
  });
  // One statement, so all or nothing by itself; the count comes back as one row.
  const [inserted] = await runSteps(db, () =>
    selectRows<{ n: number }>(
      sql`WITH inserted AS (${sql.raw(INSERT_INTO_EVENTS)}
            SELECT * FROM unnest(${sql.join(arrays, sql`, `)}) ${sql.raw(UNLESS_IMPORTED)}
            RETURNING 1)
          SELECT count(*) AS n FROM inserted`,
    ),
  );
  return inserted!.n;
}

/**
 * Sets up a connection that is about to import (the CLI's own, not the server's): on SQLite the
 * page cache is 16 MB instead of 64 (index pages come from the operating system's file cache as
 * fast, and the import's memory stays lower). The write-ahead log is copied back every 4 MB, as
 * SQLite's default: copying it back more rarely made an import alone faster, but beside a live
 * server the log grew to hundreds of MB, and the servers' routing p99 reached seconds through
 * the import (measured together with the batch size, cli/event-import.ts). docs/benchmarks.md
 * ("Figures behind the code") has the measurements.
 */
export function prepareImportConnection(db: Db): void {
  if (db.kind !== 'sqlite') return;
  db.sqlite.pragma('cache_size = -16384');
}

/**
 * After an import: copies into the database what is left of the log, as far as a live server's
 * reads allow. A checkpoint that waited for those reads (FULL, TRUNCATE) would stop every write
 * of the server meanwhile; the file is cut to WAL_SIZE_LIMIT_BYTES (engine/sqlite-open.ts) when
 * the log starts again, or removed when the last connection closes.
 */
export function finishImportConnection(db: Db): void {
  if (db.kind === 'sqlite') db.sqlite.pragma('wal_checkpoint(PASSIVE)');
}

/**
 * Inserts the batch in one transaction, all or nothing; returns how many were new (the rest were
 * imported before).
 */
export async function insertEventBatch(
  db: Db,
  organizationId: number,
  batch: readonly EventToImport[],
): Promise<number> {
  if (db.kind === 'postgres') return insertEventsOnPostgres(db, organizationId, batch);
  const { highestEventId, indexBatchDescriptions } = sqliteStatements(db);
  return db.sqlite
    .transaction(() => {
      // The write lock is held from BEGIN IMMEDIATE, so every event above this id is the batch's.
      const before = highestEventId.get() as number;
      const inserted = insertEventsOnSqlite(db, organizationId, batch);
      if (inserted > 0) indexBatchDescriptions.run(before);
      return inserted;
    })
    .immediate();
}

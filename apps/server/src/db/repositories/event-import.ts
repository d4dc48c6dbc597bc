// The write side of `agentline events import` (the list queries live in events.ts). Import keys
// make it idempotent: a batch inserts only the events whose (organization, import key) is new.

import type { Statement } from 'better-sqlite3';
import type { Db } from '../client.js';
import { perDatabase } from '../prepared.js';

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

function insertRowsStatement(db: Db, rows: number): Statement {
  const row = '(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)';
  return db.sqlite.prepare(
    `INSERT INTO events (organization_id, import_key, timestamp, session_id, conversation_id,
       source, source_id, category, type, user_id, description, attributes)
     VALUES ${Array.from({ length: rows }, () => row).join(', ')}
     ON CONFLICT (organization_id, import_key) WHERE import_key IS NOT NULL DO NOTHING`,
  );
}

// Prepared once per connection: preparing per batch would cost more than the inserts.
const insertStatements = perDatabase((db) => ({
  many: insertRowsStatement(db, ROWS_PER_INSERT),
  one: insertRowsStatement(db, 1),
}));

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

/** Inserts the events, the new ones only; returns how many were new. */
function insertEvents(db: Db, organizationId: number, batch: readonly EventToImport[]): number {
  const { many, one } = insertStatements(db);
  let inserted = 0;
  let start = 0;
  for (; start + ROWS_PER_INSERT <= batch.length; start += ROWS_PER_INSERT) {
    const parameters: unknown[] = [];
    for (let i = start; i < start + ROWS_PER_INSERT; i += 1) {
      pushParameters(parameters, organizationId, batch[i]!);
    }
    inserted += many.run(parameters).changes;
  }
  for (; start < batch.length; start += 1) {
    const parameters: unknown[] = [];
    pushParameters(parameters, organizationId, batch[start]!);
    inserted += one.run(parameters).changes;
  }
  return inserted;
}

// Imported events skip the description index's trigger (migration 0005): indexing the whole
// batch with one statement is several times faster than one virtual-table insert per row.
const indexBatchDescriptions = perDatabase((db) =>
  db.sqlite.prepare(
    `INSERT INTO events_description_fts (rowid, description)
     SELECT id, description FROM events
     WHERE id > ? AND import_key IS NOT NULL`,
  ),
);

const highestEventId = perDatabase((db) =>
  db.sqlite.prepare('SELECT coalesce(max(id), 0) FROM events').pluck(),
);

/** Inserts the batch in one transaction; returns how many were new (the rest were imported before). */
export async function insertEventBatch(
  db: Db,
  organizationId: number,
  batch: readonly EventToImport[],
): Promise<number> {
  return db.sqlite
    .transaction(() => {
      // The write lock is held from BEGIN IMMEDIATE, so every event above this id is the batch's.
      const before = highestEventId(db).get() as number;
      const inserted = insertEvents(db, organizationId, batch);
      if (inserted > 0) indexBatchDescriptions(db).run(before);
      return inserted;
    })
    .immediate();
}

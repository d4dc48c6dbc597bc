// The write side of `agentline events import` (the list queries live in events.ts). Import keys
// make it idempotent: a batch inserts only the events whose (organization, import key) is new.

import type { Statement } from 'better-sqlite3';
import type { Db } from '../client.js';

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

type InsertEvent = (organizationId: number, event: EventToImport) => number;

// Prepared once per connection: preparing per row would cost more than the insert itself.
const insertEventByConnection = new WeakMap<Db['sqlite'], InsertEvent>();

function insertEventFor(db: Db): InsertEvent {
  let insertEvent = insertEventByConnection.get(db.sqlite);
  if (!insertEvent) {
    const statement: Statement = db.sqlite.prepare(
      `INSERT INTO events (organization_id, import_key, timestamp, session_id, conversation_id,
         source, source_id, category, type, user_id, description, attributes)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (organization_id, import_key) WHERE import_key IS NOT NULL DO NOTHING`,
    );
    // Positional parameters: binding by name costs measurably at hundreds of thousands of rows.
    insertEvent = (organizationId, event) =>
      statement.run(
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
      ).changes;
    insertEventByConnection.set(db.sqlite, insertEvent);
  }
  return insertEvent;
}

/** Inserts the batch in one transaction; returns how many were new (the rest were imported before). */
export async function insertEventBatch(
  db: Db,
  organizationId: number,
  batch: readonly EventToImport[],
): Promise<number> {
  const insertEvent = insertEventFor(db);
  return db.sqlite
    .transaction(() => {
      let inserted = 0;
      for (const event of batch) inserted += insertEvent(organizationId, event);
      return inserted;
    })
    .immediate();
}

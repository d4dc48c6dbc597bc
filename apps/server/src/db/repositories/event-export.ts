// The read side of `agentline events export`: an organization's events older than a moment, in id
// order, one batch per statement, so an archive of millions of events never holds more than one
// batch in memory.

import { sql } from 'drizzle-orm';
import type { Db } from '../engine/client.js';
import { columnsOf, parsedJson, runSteps, selectRows } from '../engine/portable-sql.js';
import { events, type JsonObject } from '../schema/sqlite.js';

/** An event as stored, every column but the organization; attributes parsed on both backends. */
export type StoredEvent = Omit<typeof events.$inferSelect, 'organizationId'>;

/** The events before a moment: how many, and the range of their ids. */
export interface EventsBefore {
  count: number;
  /** Both 0 when there are none. */
  firstId: number;
  lastId: number;
}

/** One pass over the organization's (organization, timestamp, id) index, which holds all three. */
export async function eventsBefore(
  db: Db,
  organizationId: number,
  before: string,
): Promise<EventsBefore> {
  const [row] = await runSteps(db, () =>
    selectRows<{ count: number; firstId: number | null; lastId: number | null }>(
      sql`SELECT count(*) AS "count", min(${events.id}) AS "firstId", max(${events.id}) AS "lastId"
          FROM ${events}
          WHERE ${events.organizationId} = ${organizationId} AND ${events.timestamp} < ${before}`,
    ),
  );
  return { count: row!.count, firstId: row!.firstId ?? 0, lastId: row!.lastId ?? 0 };
}

/**
 * The events of `range` (from eventsBefore) in id order, `batchSize` per batch. Each batch is a
 * keyset page continuing after the previous one's last id, so no batch reads the ones before it.
 * The range's bounds keep every batch within the ids that matched: NOT INDEXED makes SQLite walk
 * just that stretch of rowids in order, instead of sorting all the organization's older events by
 * id from their timestamp index for each batch (PostgreSQL's planner chooses from its statistics).
 * Old events written after the count (an import gives them new, higher ids) are left out, so the
 * archive holds the events the count saw.
 */
export async function* eventBatchesBefore(
  db: Db,
  organizationId: number,
  before: string,
  range: EventsBefore,
  batchSize: number,
): AsyncGenerator<StoredEvent[]> {
  const from = db.kind === 'sqlite' ? sql.raw('events NOT INDEXED') : sql`${events}`;
  let afterId = range.firstId - 1;
  while (afterId < range.lastId) {
    const rows = await runSteps(db, () =>
      selectRows<StoredEvent>(
        sql`SELECT ${columnsOf(events, ['organizationId'])} FROM ${from}
            WHERE ${events.id} > ${afterId} AND ${events.id} <= ${range.lastId}
              AND ${events.organizationId} = ${organizationId} AND ${events.timestamp} < ${before}
            ORDER BY ${events.id}
            LIMIT ${batchSize}`,
      ),
    );
    if (rows.length === 0) return;
    for (const row of rows) {
      // JSON text on SQLite, already parsed by the driver on PostgreSQL.
      row.attributes = row.attributes === null ? null : parsedJson<JsonObject>(row.attributes);
    }
    yield rows;
    afterId = rows[rows.length - 1]!.id;
  }
}

// Reading the events list. Events are written by session routing and `agentline events import`.

import { and, count, eq } from 'drizzle-orm';
import type { EventProperty } from '../../domain/events.js';
import type { ListQuery } from '../../domain/list-query.js';
import type { Db } from '../client.js';
import { listConditions, listOrder, type ColumnMap } from '../list-sql.js';
import { events } from '../schema.js';

export type EventRow = typeof events.$inferSelect;

const EVENT_COLUMNS: ColumnMap<EventProperty> = {
  timestamp: events.timestamp,
  session_id: events.sessionId,
  conversation_id: events.conversationId,
  source: events.source,
  source_id: events.sourceId,
  category: events.category,
  type: events.type,
  user_id: events.userId,
  description: events.description,
  attributes: events.attributes,
};

export async function listEvents(
  db: Db,
  organizationId: number,
  query: ListQuery<EventProperty>,
): Promise<{ rows: EventRow[]; totalCount: number }> {
  const where = and(
    eq(events.organizationId, organizationId),
    ...listConditions(query, { columns: EVENT_COLUMNS, windowColumn: events.timestamp }),
  );
  const rows =
    query.limit === 0
      ? []
      : db.orm
          .select()
          .from(events)
          .where(where)
          .orderBy(...listOrder(query, EVENT_COLUMNS, events.id))
          .limit(query.limit)
          .offset(query.offset)
          .all();
  const [total] = db.orm.select({ n: count() }).from(events).where(where).all();
  return { rows, totalCount: total?.n ?? 0 };
}

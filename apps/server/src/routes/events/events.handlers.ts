import type { RouteHandler } from '@hono/zod-openapi';
import { EVENT_LIST } from '../../domain/events.js';
import { listPage, parseListQuery, projectItem } from '../../domain/list-query.js';
import { listEvents, type EventRow } from '../../db/repositories/events.js';
import type { AppEnv } from '../../http/app-env.js';
import type * as routes from './events.routes.js';

type WireEvent = ReturnType<typeof toWireEvent>;

/** The one place an event row becomes a wire Event. */
function toWireEvent(row: EventRow) {
  return {
    timestamp: row.timestamp,
    session_id: row.sessionId,
    conversation_id: row.conversationId,
    source: row.source,
    source_id: row.sourceId,
    category: row.category,
    type: row.type,
    user_id: row.userId,
    description: row.description,
    attributes: row.attributes,
  };
}

export const eventsList: RouteHandler<typeof routes.eventsList, AppEnv> = async (c) => {
  const query = parseListQuery(EVENT_LIST, c.req.valid('query'));
  const { rows, totalCount } = await listEvents(c.get('db'), c.get('auth').organizationId, query);
  const items = rows.map((row) =>
    projectItem<WireEvent, 'timestamp'>(toWireEvent(row), query.projection),
  );
  return c.json(listPage(items, query, totalCount), 200);
};

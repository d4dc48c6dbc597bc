import type { RouteHandler } from '@hono/zod-openapi';
import { EVENT_LIST } from '../../domain/events.js';
import { listPage, parseListQuery, projectItem } from '../../domain/list-query.js';
import { listEvents, type ListedEvent } from '../../db/repositories/events.js';
import type { AppEnv } from '../../http/app-env.js';
import type * as routes from './events.routes.js';

type WireEvent = ReturnType<typeof toWireEvent>;

/** The one place a listed event becomes a wire Event: its properties, without the row's id. */
function toWireEvent(row: ListedEvent) {
  return {
    timestamp: row.timestamp,
    session_id: row.session_id,
    conversation_id: row.conversation_id,
    source: row.source,
    source_id: row.source_id,
    category: row.category,
    type: row.type,
    user_id: row.user_id,
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

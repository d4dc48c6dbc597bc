import { EVENT_LIST } from '../../domain/events.js';
import { listPageJson, parseListQuery } from '../../domain/list-query.js';
import { cursorSigner } from '../../db/repositories/cursor-signer.js';
import { listEvents } from '../../db/repositories/events.js';
import type { AppRouteHandler } from '../../http/router.js';
import { jsonTextResponse } from '../../http/json-text.js';
import type * as routes from './events.routes.js';

export const eventsList: AppRouteHandler<typeof routes.eventsList> = async (c) => {
  const db = c.get('db');
  const { organizationId } = c.get('auth');
  const signer = await cursorSigner(db);
  const query = await parseListQuery(EVENT_LIST, c.req.valid('query'), organizationId, signer);
  const { rows, totalCount, next } = await listEvents(
    db,
    organizationId,
    query,
    c.get('eventReaders'),
  );
  // The items are wire Events rendered by the database (listEvents; domain/json-text.ts).
  return jsonTextResponse(
    c,
    listPageJson(
      rows.map((row) => row.json),
      query,
      totalCount,
      next,
      signer,
    ),
  );
};

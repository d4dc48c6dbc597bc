import { EVENT_LIST } from '../../domain/events.js';
import { listPageJson, parseListQuery } from '../../domain/list-query.js';
import { cursorSigner } from '../../runtime/cursor-signer.js';
import { listEvents } from '../../runtime/event-list-memory.js';
import { eventsListVersion } from '../../db/repositories/event-conditions.js';
import type { AppRouteHandler } from '../../http/router.js';
import { ApiError } from '../../http/errors.js';
import { resumePosition } from '../../http/event-stream.js';
import { jsonTextResponse, KeptListAnswers } from '../../http/versioned-cache.js';
import type { components } from '../../spec-types.js';
import * as routes from './events.routes.js';

type EventListResponse = components['schemas']['EventListResponse'];

// A dashboard polls the same first pages again and again, while events are mostly added: an
// answer is kept per organization and query for as long as the organization's events version
// (its highest event id and count of removed events; EventsPage) is unchanged, so a repeated
// request reads one index entry instead of its page and count (and, on SQLite, answers without
// the trip to a reader thread).
const keptAnswers = new KeptListAnswers<EventListResponse>(routes.eventsList, eventsListVersion, {
  keepsCursorPages: false,
});

/** Route middleware of eventsList: a kept answer, ahead of the query's validation. */
export const keptEventsAnswer = keptAnswers.serve;

export const eventsList: AppRouteHandler<typeof routes.eventsList> = async (c) => {
  const db = c.get('db');
  const { organizationId } = c.get('auth');
  const signer = await cursorSigner(db);
  const query = await parseListQuery(EVENT_LIST, c.req.valid('query'), organizationId, signer);
  const { rows, totalCount, next, version } = await listEvents(
    db,
    organizationId,
    query,
    c.get('eventReaders'),
  );
  // The items are wire Events rendered by the database (listEvents; vocabulary/json-text.ts).
  const json = listPageJson<EventListResponse['items'][number]>(
    rows.map((row) => row.json),
    query,
    totalCount,
    next,
    signer,
  );
  keptAnswers.keep(c, signer, version, json);
  return jsonTextResponse(c, json);
};

export const eventsStream: AppRouteHandler<typeof routes.eventsStream> = async (c) => {
  const db = c.get('db');
  const { organizationId, keyId } = c.get('auth');
  const params = c.req.valid('query');
  const lastEventId = c.req.valid('header')['Last-Event-ID'];
  // The list's own parsing, so search pairs, window and fields mean what they mean there.
  const query = await parseListQuery(
    EVENT_LIST,
    { ...params, page: 0, limit: 0 },
    organizationId,
    await cursorSigner(db),
  );
  // An empty Last-Event-ID is what a client sends that has received no id yet.
  const start = lastEventId
    ? { afterId: await resumePosition(db, organizationId, lastEventId) }
    : undefined;
  const streams = c.get('eventStreams');
  const response = await streams.open(
    c,
    keyId,
    organizationId,
    query,
    start ?? (query.window.start ? { afterId: 0 } : 'now'),
  );
  if (response) return response;
  throw new ApiError(
    'RATE_LIMITED',
    `This API key already has ${streams.perKey} event streams open on this server, the most it may have at once; close one, or send this again once one has ended (Retry-After).`,
    // A place frees as soon as one of the key's streams closes.
    { 'Retry-After': '1' },
  );
};

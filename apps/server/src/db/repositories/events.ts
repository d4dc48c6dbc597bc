// Reading the events list at a million events per organization: its version, counts, substring
// and description searches, page positions and the page's JSON, each below; what the list keeps
// between reads is runtime/event-list-memory.ts's (EventsListMemory). How they fit together, and
// why: docs/architecture.md, "Reading the events list".

import { and, eq, sql, type SQL } from 'drizzle-orm';
import { EventProperties } from '../../generated/enum-values.js';
import type { EventProperty } from '../../vocabulary/events.js';
import type { ListPosition, ListQuery } from '../../vocabulary/list-query.js';
import type { JsonText } from '../../vocabulary/json-text.js';
import type { Db } from '../engine/client.js';
import {
  numberedPage,
  pageOf,
  pageWindow,
  renderedOnceSql,
  splitPage,
  wholePosition,
} from '../engine/list-sql.js';
import { runListRead, runSteps, selectRows, type Steps } from '../engine/portable-sql.js';
import { events } from '../schema/sqlite.js';
import {
  eventColumns,
  eventConditions,
  eventOrder,
  eventOrderColumns,
  eventPrefixBound,
  eventsAbove,
  eventsNullsApart,
  isWindowed,
  matchesFrom,
  NOTHING_RESOLVED,
  SORTED_ON_SQLITE,
  UNFILTERED,
  type Access,
  type EventSelection,
  type ResolvedValues,
} from './event-conditions.js';
import type { components } from '../../spec-types.js';
import {
  countedRows,
  countedSelection,
  countOfRows,
  countOf,
  pageStart,
  type CountedSelection,
  type HourCount,
} from './event-pages.js';
import type { PageStart } from './event-positions.js';
import {
  eventsVersion,
  highestEventId,
  versionText,
  type EventsVersion,
} from './event-conditions.js';

type EventItem = components['schemas']['Event'];

/**
 * An event as the list reads it: its id (the order's tiebreaker) and its wire object as JSON text,
 * with the query's projected properties, rendered by the database.
 */
export interface ListedEvent {
  id: number;
  /** Branded here, where the SQL that renders it lives (itemJson); see vocabulary/json-text.ts. */
  json: JsonText<EventItem>;
}

/**
 * One page of the list, the number of events matching its query, where the next starts, and the
 * version of the organization's events it was read at (eventsVersion): the same query reads the
 * same page for as long as the version is unchanged.
 */
export interface EventsPage {
  rows: ListedEvent[];
  totalCount: number;
  next: ListPosition | null;
  version: string;
}

/** Below this many new events since a kept count, they are counted row by row by id. */
const MAX_COUNT_DELTA = 100_000;

/**
 * How many new event ids a kept count is brought up to date through (countEventsAbove), rather
 * than counted anew. The ids above the kept one are every organization's: on SQLite, once there
 * are more of them than the organization has events (`organizationEvents`; what a fresh count
 * reads at most), counting anew reads fewer rows. A count a dashboard asks for once a minute
 * beside an import was otherwise a scan of every organization's new events.
 */
export function countDeltaBound(db: Db, organizationEvents: number): number {
  return db.kind === 'sqlite' ? Math.min(MAX_COUNT_DELTA, organizationEvents) : MAX_COUNT_DELTA;
}
/** Above this many pages of matches, SQLite sorts a page's keys apart from its items (readPage). */
const SORTED_PAGES_APART = 2;
/** Matches at least this share of the organization's events are found by walking the order. */
const WALK_ORDER_SHARE = 0.01;

/** The statement counting the organization's events that `selection` matches. */
export function countStatement(
  db: Db,
  organizationId: number,
  selection: EventSelection,
  resolved: ResolvedValues,
): SQL {
  const access = db.kind === 'sqlite' ? 'seek' : 'plan';
  const conditions = eventConditions(db, organizationId, selection, resolved, access);
  return sql`SELECT count(*) AS n FROM ${matchesFrom(db, selection, resolved)} WHERE ${conditions}`;
}

/**
 * How many of the organization's events `selection` matches: the sum of their counts where the
 * counts hold them (countedRows), else counted row by row.
 */
export function* countEvents(
  db: Db,
  organizationId: number,
  selection: EventSelection,
  resolved: ResolvedValues,
): Steps<number> {
  const counted = countedRows(selection, resolved);
  if (counted) return yield* countOfRows(organizationId, counted);
  const [total] = yield* selectRows<{ n: number }>(
    countStatement(db, organizationId, selection, resolved),
  );
  return total!.n;
}

/** How many of them have ids above `afterId`: a read of those ids alone (eventsAbove). */
export function* countEventsAbove(
  db: Db,
  organizationId: number,
  selection: EventSelection,
  resolved: ResolvedValues,
  afterId: number,
): Steps<number> {
  const [delta] = yield* selectRows<{ n: number }>(
    sql`SELECT count(*) AS n FROM ${eventsAbove(db, organizationId, selection, resolved, afterId)}`,
  );
  return delta!.n;
}

/**
 * What the events list keeps between reads (runtime/event-list-memory.ts, per database handle):
 * each answers from what it kept at an earlier version or through this module's queries, in the
 * read's snapshot.
 */
export interface EventsListMemory {
  /** How many of the organization's events `selection` matches at `version` (countEvents). */
  count(
    organizationId: number,
    selection: EventSelection,
    resolved: ResolvedValues,
    version: EventsVersion,
    /** The organization's event count, if known (countDeltaBound). */
    organizationCount?: number,
  ): Steps<number>;
  /**
   * The query's category, type and source filters resolved to their matching values
   * (matchingValues), and with the organization's event count (SQLite) which description
   * filters use the trigram index (fewTrigramMatchesBelow), once for both the count and the page.
   */
  resolveValues(
    organizationId: number,
    query: ListQuery<EventProperty>,
    throughId: number,
    organizationCount?: number,
  ): Steps<ResolvedValues>;
  /** The hours of the selected events at `version`, oldest first, with how many each holds. */
  hours(
    organizationId: number,
    selection: CountedSelection,
    version: EventsVersion,
  ): Steps<HourCount[]>;
  /**
   * Where the page skipping `query.offset` of its `totalCount` events starts, from the positions
   * of every so many of its events (event-positions.ts), or null when an OFFSET costs little.
   */
  positionedStart(
    organizationId: number,
    query: ListQuery<EventProperty>,
    resolved: ResolvedValues,
    version: EventsVersion,
    totalCount: number,
    access: Access,
  ): Steps<PageStart | null>;
}

/**
 * Walking, the order's index reads rows in order and LIMIT stops early. Seeking, unary plus
 * keeps SQLite's planner off that index, which it would otherwise prefer to avoid a sort even when
 * another index finds the few matches at once.
 */
function orderBy(db: Db, order: ListQuery<EventProperty>['order'], access: Access): SQL {
  const direction = sql.raw(order.direction);
  const column = eventColumns(db)[order.property];
  switch (access) {
    case 'walk':
      return sql`${column} ${direction}, ${events.id} ${direction}`;
    case 'seek':
      return sql`+${column} ${direction}, +${events.id} ${direction}`;
    case 'plan':
      return eventOrder(db, order);
  }
}

/**
 * The page's items as JSON text, built by the database: reading eleven columns into a JS object,
 * parsing the attributes and serialising it all again took longer than the query itself. The
 * properties are the projected ones in the wire order; attributes are embedded as JSON (stored
 * as JSON text on SQLite, a json column on PostgreSQL), not quoted as a string.
 */
export function itemJson(
  { kind, spelling }: Pick<Db, 'kind' | 'spelling'>,
  projection: ReadonlySet<string> | null,
): SQL {
  const properties = projection
    ? EventProperties.filter((property) => projection.has(property))
    : EventProperties;
  // Built and rendered once per projection (a subset of the ten properties): every page, replay
  // and feed read names it, and building it chunk by chunk cost a good part of an events read
  // (docs/benchmarks.md, "Figures behind the code").
  return renderedOnceSql(kind, spelling, `item json ${properties.join(',')}`, () =>
    spelling.jsonObject(
      properties.map((property) => ({
        name: property,
        value: sql.identifier(property),
        isJson: property === 'attributes',
      })),
    ),
  );
}

/**
 * How SQLite serves the page's conditions, from the share of the organization's events they
 * match (`organizationCount`, known on SQLite when the query has search pairs); PostgreSQL's
 * planner decides for itself.
 */
function pageAccess(db: Db, totalCount: number, organizationCount: number | undefined): Access {
  if (db.kind === 'postgres') return 'plan';
  // Without search pairs (a time window alone is a range of the timestamp index) or with many
  // matches, the order's index is walked.
  return organizationCount === undefined || totalCount >= organizationCount * WALK_ORDER_SHARE
    ? 'walk'
    : 'seek';
}

function* readPage(
  db: Db,
  organizationId: number,
  query: ListQuery<EventProperty>,
  resolved: ResolvedValues,
  totalCount: number,
  access: Access,
  /** The hours of the query's events, when their counts serve it (event-pages.ts). */
  hours: HourCount[] | null,
  version: EventsVersion,
  memory: EventsListMemory,
): Steps<{ rows: ListedEvent[]; next: ListPosition | null }> {
  const columns = eventOrderColumns(db);
  // Walking, the order's index is read; seeking, every match is (matchesFrom).
  const from = access === 'seek' ? matchesFrom(db, query, resolved) : sql`events`;
  const selected = sql`SELECT "id", ${itemJson(db, query.projection)} AS "json",
    ${columns[query.order.property]} AS "sortKey" FROM`;
  const select = sql`${selected} ${from}`;
  const conditions = eventConditions(db, organizationId, query, resolved, access);
  // SQLite builds every match's item before it sorts them, to keep the page's few: where it sorts
  // (every match found, a window in another order, an order no index of its holds) more than a
  // few pages' worth, the page's ids are sorted by their keys alone in a subquery and the items
  // built of those (as list-table.ts reads every other list).
  const sorted =
    db.kind === 'sqlite' &&
    totalCount > query.limit * SORTED_PAGES_APART &&
    (access === 'seek' ||
      SORTED_ON_SQLITE.has(query.order.property) ||
      (isWindowed(query) && query.order.property !== 'timestamp'));
  /** The page of `where`'s events in `order`, past and up to `limit` (its LIMIT and OFFSET). */
  const readRows = (where: SQL | undefined, order: ListQuery<EventProperty>['order'], limit: SQL) =>
    selectRows<ListedEvent & { sortKey: unknown }>(
      sorted
        ? sql`${selected} events
            WHERE "id" IN (SELECT "id" FROM ${from} WHERE ${where}
              ORDER BY ${orderBy(db, order, access)} ${limit})
            ORDER BY ${orderBy(db, order, 'seek')}`
        : sql`${select} WHERE ${where} ORDER BY ${orderBy(db, order, access)} ${limit}`,
    );
  if (query.after) {
    // A cursor page: a seek to the position in the order's index, whatever its depth.
    const position = yield* wholePosition(query.after, {
      column: columns[query.order.property],
      from: events,
      primaryKey: events.id,
      ofOrganization: eq(events.organizationId, organizationId),
    });
    const { after, limitOffset } = pageWindow({ ...query, after: position }, columns, events.id);
    const read = yield* readRows(
      and(conditions, after, eventPrefixBound(db, query.order, position)),
      query.order,
      limitOffset,
    );
    return splitPage(read, query.limit);
  }
  const page = numberedPage(query, totalCount);
  if (!page) return { rows: [], next: null };
  // The page starts in its hour, or deep in another order at a kept position before it
  // (event-positions.ts): only the events between are skipped one by one. Those positions are
  // of the ascending order, and a descending page is read ascending, reversed: past a position
  // descending come the NULLs, which no range of the order's index takes in with the rest.
  const reversed = !hours && query.order.direction === 'desc';
  const ascending: ListQuery<EventProperty> = {
    ...query,
    order: { ...query.order, direction: 'asc' },
    offset: totalCount - query.offset - page.take,
  };
  const start = hours
    ? pageStart(hours, query.offset, query.order.direction, access)!
    : yield* memory.positionedStart(
        organizationId,
        reversed ? ascending : query,
        resolved,
        version,
        totalCount,
        access,
      );
  if (start) {
    const read = yield* readRows(
      and(conditions, start.from),
      reversed ? ascending.order : query.order,
      sql`LIMIT ${page.take} OFFSET ${start.skip}`,
    );
    if (reversed) read.reverse();
    return pageOf(read, page.hasMore);
  }
  const nearStart = eventsNullsApart(db, page.order, { select, conditions }, page);
  const read = nearStart
    ? yield* selectRows<ListedEvent & { sortKey: unknown }>(nearStart)
    : yield* readRows(conditions, page.order, sql`LIMIT ${page.take} OFFSET ${page.skip}`);
  if (page.reversed) read.reverse();
  return pageOf(read, page.hasMore);
}

function* listing(
  db: Db,
  organizationId: number,
  query: ListQuery<EventProperty>,
  memory: EventsListMemory,
): Steps<EventsPage> {
  const version = yield* eventsVersion(db, organizationId);
  // What SQLite's choices of index are measured against (pageAccess, resolveValues).
  const organizationCount =
    db.kind === 'sqlite' && query.filters.length > 0
      ? yield* memory.count(organizationId, UNFILTERED, NOTHING_RESOLVED, version)
      : undefined;
  const resolved = yield* memory.resolveValues(
    organizationId,
    query,
    version.throughId,
    organizationCount,
  );
  const selection = countedSelection(query, resolved);
  const hours = selection ? yield* memory.hours(organizationId, selection, version) : null;
  const totalCount = hours
    ? countOf(hours)
    : yield* memory.count(organizationId, query, resolved, version, organizationCount);
  const access = pageAccess(db, totalCount, organizationCount);
  const { rows, next } = yield* readPage(
    db,
    organizationId,
    query,
    resolved,
    totalCount,
    access,
    hours,
    version,
    memory,
  );
  return { rows, totalCount, next, version: versionText(version) };
}

/**
 * The page, read as a list read, with what `memory` kept of earlier reads (runtime/
 * event-list-memory.ts calls it, inline or on a reader thread).
 */
export async function listEvents(
  db: Db,
  organizationId: number,
  query: ListQuery<EventProperty>,
  memory: EventsListMemory,
): Promise<EventsPage> {
  return runListRead(db, () => listing(db, organizationId, query, memory));
}

/** What a stream selects and shows: search pairs, time window, projection. */
export type EventStreamQuery = Pick<ListQuery<EventProperty>, 'filters' | 'window' | 'projection'>;

/** An event of the feed: its id (its place in commit order) and its wire object as JSON text. */
export type FeedEvent = ListedEvent;

/**
 * The organization's highest committed event id (highestEventId): a stream that opens now sees
 * only later commits, and an EventsPage read at this id is still the page of its query.
 */
export async function currentEventPosition(db: Db, organizationId: number): Promise<number> {
  return runSteps(db, () => highestEventId(db, organizationId));
}

/** A batch of a stream's replay: up to `limit` matching events in (afterId, throughId]. */
export interface ReplayJob {
  organizationId: number;
  query: EventStreamQuery;
  afterId: number;
  throughId: number;
  limit: number;
}

/**
 * A stream's replay: up to `limit` matching events in (afterId, throughId], in id order, as the
 * list shows them with the stream's `fields`. A client chooses how much it replays, so it runs
 * as a list read does (PostgreSQL's list pool, under the list query timeout; on SQLite,
 * runtime/event-readers.ts reads it on a thread instead).
 */
export async function replayEvents(
  db: Db,
  { organizationId, query, afterId, throughId, limit }: ReplayJob,
): Promise<FeedEvent[]> {
  return runListRead(db, () =>
    selectRows<FeedEvent>(
      sql`SELECT id, ${itemJson(db, query.projection)} AS json
          FROM ${eventsAbove(db, organizationId, query, NOTHING_RESOLVED, afterId, throughId)}
          ORDER BY id LIMIT ${limit}`,
    ),
  );
}

// What selects events, for the events list's page and count and for the stream's reads: each
// property's column, a category, type or source substring resolved to its matching distinct
// values, a description substring through the trigram index, and the conditions rendered for how
// SQLite is to serve them (events.ts says why each is so). Last, the version of an
// organization's events, which everything kept of them (resolved values, counts, page positions,
// answers: runtime/) is checked against.

import { and, eq, is, sql, type SQL } from 'drizzle-orm';
import { getTableConfig, SQLiteColumn } from 'drizzle-orm/sqlite-core';
import { EventProperties } from '../../generated/enum-values.js';
import type { EventProperty } from '../../vocabulary/events.js';
import type { ListPosition, ListQuery, SearchFilter } from '../../vocabulary/list-query.js';
import type { Db } from '../engine/client.js';
import {
  listConditions,
  listOrder,
  nullsApart,
  prefixBound,
  prefixedOrder,
  type ColumnMap,
} from '../engine/list-sql.js';
import { prepared, runReadSteps, selectRows, type Steps } from '../engine/portable-sql.js';
import { perDatabase } from '../engine/caches.js';
import { events, organizations } from '../schema/sqlite.js';

/** The column (or expression) each property is searched and ordered by. */
export const eventColumns = perDatabase(({ spelling }: Db): ColumnMap<EventProperty> => ({
  timestamp: events.timestamp,
  session_id: events.sessionId,
  conversation_id: events.conversationId,
  source: events.source,
  source_id: events.sourceId,
  category: events.category,
  type: events.type,
  user_id: events.userId,
  description: events.description,
  attributes: spelling.jsonText(events.attributes),
}));

/** Orders PostgreSQL reads through an indexed prefix (its migration 0018): long texts. */
const PREFIX_ORDERED: ReadonlySet<EventProperty> = new Set(['description', 'attributes']);

/**
 * The column (or expression) each property is ordered by. On PostgreSQL a description or
 * attributes is ordered by its indexed prefix first, then by the whole text, both by code point
 * (COLLATE "C"; schema/order-prefix.ts).
 */
export const eventOrderColumns = perDatabase((db: Db): ColumnMap<EventProperty> =>
  db.kind === 'sqlite'
    ? eventColumns(db)
    : { ...eventColumns(db), description: sql`(${events.description} COLLATE "C")` },
);

const prefixOrdered = (db: Db, property: EventProperty): boolean =>
  db.kind === 'postgres' && PREFIX_ORDERED.has(property);

/** ORDER BY of the list's order: the property's column, the id breaking ties. */
export function eventOrder(db: Db, order: ListQuery<EventProperty>['order']): SQL {
  const columns = eventOrderColumns(db);
  const ordered = listOrder({ order }, columns, events.id, db.spelling);
  return prefixOrdered(db, order.property)
    ? prefixedOrder(columns[order.property], order.direction, ordered, db.spelling)
    : ordered;
}

/** On PostgreSQL, the indexed prefix's bound past a position of a long text's order. */
export function eventPrefixBound(
  db: Db,
  order: ListQuery<EventProperty>['order'],
  position: ListPosition | null,
): SQL | undefined {
  if (!prefixOrdered(db, order.property)) return undefined;
  const column = eventOrderColumns(db)[order.property];
  return prefixBound(column, order.direction, position?.value, { nullable: true });
}

/**
 * On PostgreSQL, a page near the start of a long text's ascending order, its events without the
 * text read apart (list-sql.ts, nullsApart); null for any other page.
 */
export function eventsNullsApart(
  db: Db,
  order: ListQuery<EventProperty>['order'],
  read: { select: SQL; conditions: SQL | undefined },
  page: { skip: number; take: number },
): SQL | null {
  if (!prefixOrdered(db, order.property)) return null;
  const column = eventOrderColumns(db)[order.property];
  return nullsApart(
    { column, nullable: true },
    order.direction,
    { ...read, primaryKey: events.id, ordered: eventOrder(db, order) },
    page,
  );
}

/** More distinct values than this and resolving a substring to them stops paying off. */
const MAX_RESOLVED_VALUES = 256;

/**
 * How a condition may be served. SQLite is told: `seek` uses the indexes that find matches
 * (skip-scan values, the trigram index); `walk` keeps only conditions that filter rows read in
 * another index's order. PostgreSQL's planner chooses itself between the two (`plan`).
 */
export type Access = 'seek' | 'walk' | 'plan';

/** The properties whose events are counted per value and hour (schema: eventCounts). */
export const COUNTED_PROPERTIES = ['category', 'type', 'source'] as const;
export type CountedProperty = (typeof COUNTED_PROPERTIES)[number];

export const isCounted = (property: EventProperty): property is CountedProperty =>
  (COUNTED_PROPERTIES as readonly string[]).includes(property);

/** The distinct values of a low-cardinality property containing `value`, or null if too many. */
export function* matchingValues(
  db: Db,
  organizationId: number,
  property: CountedProperty,
  value: string,
): Steps<string[] | null> {
  // A recursive skip scan over the counts' key (organization, property, value, hour): each step
  // seeks the next distinct value. The counts hold exactly the values of the events stored.
  const ofProperty = sql`organization_id = ${organizationId} AND property = ${property}`;
  const step = sql`SELECT (SELECT min(value) FROM event_counts WHERE ${ofProperty} AND value > d.v)
                   FROM d WHERE d.v IS NOT NULL`;
  const first = sql`SELECT min(value) FROM event_counts WHERE ${ofProperty}`;
  const hit = sql`${db.spelling.contains(sql`v`, value)} AS hit`;
  const distinct = yield* selectRows<{ v: string; hit: 0 | 1 | boolean }>(
    db.spelling.limitedRecursion(
      sql`d(v)`,
      first,
      step,
      sql`SELECT v, ${hit} FROM d WHERE v IS NOT NULL`,
      MAX_RESOLVED_VALUES + 2,
    ),
  );
  if (distinct.length > MAX_RESOLVED_VALUES) return null;
  return distinct.filter((row) => row.hit === 1 || row.hit === true).map((row) => row.v);
}

/**
 * A trigram match costs a seek into events (to check its organization and the LIKE), about three
 * times what reading one of the organization's rows in its index costs: the index is over every
 * organization, so a word common in all of them is slower to find through it than to scan for.
 * A description is found through it only when it matches fewer than this share of the
 * organization's events (measured with a LIMIT, so a common word costs little to rule out).
 */
const TRIGRAM_SHARE = 0.25;

/** FTS5 phrase syntax: the value as one quoted string. */
const trigramPhrase = (value: string) => `"${value.replaceAll('"', '""')}"`;

/** What the query's searches were resolved to before its count and page are read. */
export interface ResolvedValues {
  /** Each category, type or source filter's matching distinct values (null: too many to list). */
  values: ReadonlyMap<SearchFilter<EventProperty>, string[] | null>;
  /** The description filters the trigram index narrows to few enough events (TRIGRAM_SHARE). */
  trigrams: ReadonlySet<SearchFilter<EventProperty>>;
}

/** Nothing resolved: every search is rendered as the plain scan's condition. */
export const NOTHING_RESOLVED: ResolvedValues = { values: new Map(), trigrams: new Set() };

/**
 * The number of trigram matches below which a description is found through the index in an
 * organization of `organizationCount` events (TRIGRAM_SHARE).
 */
export const fewTrigramMatchesBelow = (organizationCount: number) =>
  Math.ceil(organizationCount * TRIGRAM_SHARE) + 1;

/**
 * How many events of every organization the trigram index matches `value` in, counted up to
 * `cap` (a LIMIT, so a common word costs little to rule out); `cap` for a value under three
 * characters, which has no trigram and so cannot be found through the index.
 */
export function* trigramMatches(value: string, cap: number): Steps<number> {
  if ([...value].length < 3) return cap;
  const [found] = yield* selectRows<{ n: number }>(
    sql`SELECT count(*) AS n FROM (SELECT rowid FROM events_description_fts
        WHERE events_description_fts MATCH ${trigramPhrase(value)} LIMIT ${cap})`,
  );
  return found!.n;
}

/** What selects events, whatever their order or page: search pairs and the time window. */
export type EventSelection = Pick<ListQuery<EventProperty>, 'filters' | 'window'>;

/** Every event of the organization. */
export const UNFILTERED: EventSelection = { filters: [], window: {} };

/**
 * The properties that no index of SQLite's events (schema/sqlite.ts) holds right after the
 * organization: a page in their order is sorted, not read from an index in order.
 */
export const SORTED_ON_SQLITE: ReadonlySet<EventProperty> = (() => {
  const indexed = new Set(
    getTableConfig(events).indexes.map(({ config: { columns } }) =>
      is(columns[1], SQLiteColumn) ? columns[1].name : undefined,
    ),
  );
  return new Set(EventProperties.filter((property) => !indexed.has(property)));
})();

/** Whether the selection holds a time window (either bound). */
export const isWindowed = ({ window }: EventSelection) =>
  window.start !== undefined || window.end !== undefined;

/**
 * Whether the selection searches an identifier's exact value (a user's, a session's), which
 * selects fewer events than a category, type or source value or a word does. SQLite keeps no
 * statistics to tell: seeking, it is told to find the matches through the identifier's index
 * (eventConditions), and a word beside it is not looked up in the trigram index first.
 */
export const searchesIdentifier = (selection: EventSelection): boolean =>
  selection.filters.some(({ kind }) => kind === 'exact');

export function eventConditions(
  db: Db,
  organizationId: number,
  query: EventSelection,
  resolved: ResolvedValues,
  access: Access,
): SQL | undefined {
  const identified = access === 'seek' && searchesIdentifier(query);
  const lowCardinality = (column: CountedProperty) => (filter: SearchFilter<EventProperty>) => {
    const values = resolved.values.get(filter);
    if (!values) return undefined;
    if (values.length === 0) return sql`FALSE`;
    // Unary plus keeps SQLite's planner off this column's index while it walks another order.
    const target =
      access === 'walk' || identified ? sql`+${sql.identifier(column)}` : sql.identifier(column);
    return sql`${target} IN (${sql.join(
      values.map((v) => sql`${v}`),
      sql`, `,
    )})`;
  };
  // SQLite's planner prefers the organization's index to the trigram matches it cannot estimate.
  const usesTrigrams = (filter: SearchFilter<EventProperty>) =>
    access === 'seek' && resolved.trigrams.has(filter);
  const organization = query.filters.some(usesTrigrams)
    ? sql`+${events.organizationId} = ${organizationId}`
    : eq(events.organizationId, organizationId);
  return and(
    organization,
    ...listConditions(query, organizationId, {
      columns: eventColumns(db),
      windowColumn: events.timestamp,
      spelling: db.spelling,
      conditions: {
        category: lowCardinality('category'),
        type: lowCardinality('type'),
        source: lowCardinality('source'),
        description: (filter) => {
          if (!usesTrigrams(filter)) return undefined;
          const value = String(filter.value);
          return sql`${events.id} IN (SELECT rowid FROM events_description_fts
                     WHERE events_description_fts MATCH ${trigramPhrase(value)})
                     AND ${db.spelling.contains(events.description, value)}`;
        },
      },
    }),
  );
}

/**
 * Where SQLite reads every match of a selection from (its count, a page of few matches). Searches
 * that no index narrows (substrings of attributes, a common word, values too many to resolve)
 * read every row of the organization; through its timestamp index they come nearly in the
 * table's order. The planner otherwise takes any index that starts with the organization, and
 * one of a column in random order (description, user_id) reads the rows in that random order,
 * several times slower.
 */
export function matchesFrom(db: Db, selection: EventSelection, resolved: ResolvedValues): SQL {
  const narrows = (filter: SearchFilter<EventProperty>) =>
    filter.kind === 'exact' || !!resolved.values.get(filter) || resolved.trigrams.has(filter);
  return db.kind === 'sqlite' && selection.filters.length > 0 && !selection.filters.some(narrows)
    ? sql`events INDEXED BY events_organization_timestamp_idx`
    : sql`events`;
}

/**
 * `FROM ... WHERE` of the matching events with ids above `afterId` (and at most `throughId`):
 * NOT INDEXED makes SQLite read only that rowid range, whatever else matches (its planner would
 * otherwise walk every event of the organization in one of its indexes).
 */
export function eventsAbove(
  db: Db,
  organizationId: number,
  query: EventSelection,
  resolved: ResolvedValues,
  afterId: number,
  throughId?: number,
): SQL {
  const onSqlite = db.kind === 'sqlite';
  const upTo = throughId === undefined ? sql`` : sql`AND id <= ${throughId}`;
  return sql`${sql.raw(onSqlite ? 'events NOT INDEXED' : 'events')}
    WHERE id > ${afterId} ${upTo}
    AND ${eventConditions(db, organizationId, query, resolved, onSqlite ? 'walk' : 'plan')}`;
}

/**
 * The organization's highest event id in the snapshot: what every cache of its listing is checked
 * against. On PostgreSQL organizations write concurrently, so another one's higher ids may commit
 * before this one's lower; SQLite has one writer, and its whole table's maximum is one seek.
 */
export function* highestEventId(db: Db, organizationId: number): Steps<number> {
  const [highest] = yield* db.kind === 'sqlite'
    ? highestEventIdOfAll({})
    : highestEventIdOfOrganization({ organizationId });
  return highest?.top ?? 0;
}

// The highest id: of the whole table on SQLite (one writer), of the organization on PostgreSQL.
const HIGHEST_OF_ALL = sql`SELECT max(${events.id}) FROM ${events}`;
const HIGHEST_OF_ORGANIZATION = sql`SELECT max(${events.id}) FROM ${events}
  WHERE ${events.organizationId} = ${sql.placeholder('organizationId')}`;

const highestEventIdOfAll = prepared<{ top: number | null }>(
  sql`SELECT (${HIGHEST_OF_ALL}) AS top`,
);
const highestEventIdOfOrganization = prepared<{ top: number | null }>(
  sql`SELECT (${HIGHEST_OF_ORGANIZATION}) AS top`,
);

/** The organization's events at a point: what the list's caches are checked against. */
export interface EventsVersion {
  /** The highest event id (highestEventId). */
  throughId: number;
  /** How many of its events retention has removed. */
  removed: number;
}

const REMOVED_OF_ORGANIZATION = sql`(SELECT ${organizations.eventsRemoved} FROM ${organizations}
  WHERE ${organizations.id} = ${sql.placeholder('organizationId')})`;

// Prepared once: every events list request reads it (the version its kept answers are checked
// against), so it is not rendered anew each time.
const eventsVersionOnSqlite = prepared<{ top: number | null; removed: number }>(
  sql`SELECT (${HIGHEST_OF_ALL}) AS top, ${REMOVED_OF_ORGANIZATION} AS removed`,
);
const eventsVersionOnPostgres = prepared<{ top: number | null; removed: number }>(
  sql`SELECT (${HIGHEST_OF_ORGANIZATION}) AS top, ${REMOVED_OF_ORGANIZATION} AS removed`,
);

/** As highestEventId, with the organization's count of removed events in the same read. */
export function* eventsVersion(db: Db, organizationId: number): Steps<EventsVersion> {
  const [version] = yield* db.kind === 'sqlite'
    ? eventsVersionOnSqlite({ organizationId })
    : eventsVersionOnPostgres({ organizationId });
  return { throughId: version?.top ?? 0, removed: version?.removed ?? 0 };
}

export function versionText({ throughId, removed }: EventsVersion): string {
  return `${throughId}/${removed}`;
}

/** The version of the organization's events list (EventsPage.version), for its kept answers. */
export async function eventsListVersion(db: Db, organizationId: number): Promise<string> {
  return versionText(await runReadSteps(db, () => eventsVersion(db, organizationId)));
}

// Reading the events list at a million events per organization. Events are written by session
// routing and `agentline events import` and are never changed or deleted, which the list uses:
//
// - total_count is kept per (organization, filter) as (highest event id counted, count); a request
//   counts only the matching events above that id. Ids come from AUTOINCREMENT and writers take
//   turns, so once a read snapshot's largest id is M, no event with an id <= M can ever appear
//   later: the cached count stays exact with concurrent writers in this or any other process.
//   The cache lives in process memory per database handle (perDatabase), not in a table: a read
//   would otherwise need the write lock to update it, and losing it on restart costs one count.
// - A substring of category or type is resolved to the matching distinct values first (a skip
//   scan over the column's index, a few seeks), then matched with IN on that index.
// - A description substring of 3+ characters is looked up in the trigram index (migration 0005),
//   then checked with the same LIKE as the plain scan, so the results are identical (the index
//   folds case beyond ASCII, LIKE only ASCII: the index finds a superset, LIKE trims it).
// - Deep pages past the middle are read from the other end, in the reverse order.
// Count and page are read in one transaction, so they describe the same snapshot.

import { and, eq, sql, type SQL } from 'drizzle-orm';
import { SQLiteSyncDialect } from 'drizzle-orm/sqlite-core';
import type { Statement } from 'better-sqlite3';
import type { EventProperty } from '../../domain/events.js';
import type { ListQuery, SearchFilter } from '../../domain/list-query.js';
import type { Db } from '../client.js';
import { contains, listConditions, type ColumnMap } from '../list-sql.js';
import { perDatabase } from '../prepared.js';
import { events, type JsonObject } from '../schema.js';

export type EventRow = typeof events.$inferSelect;

export const EVENT_COLUMNS: ColumnMap<EventProperty> = {
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

/** More distinct values than this and resolving a substring to them stops paying off. */
const MAX_RESOLVED_VALUES = 256;
/** Below this many new events since the cached count, they are counted row by row by id. */
const MAX_COUNT_DELTA = 100_000;
/** Matches at least this share of the organization's events are found by walking the order. */
const WALK_ORDER_SHARE = 0.01;
/** Per process and database: list shapes (prepared statements) and filters (counts). */
const MAX_CACHED_ENTRIES = 10_000;

/** Map order as recency: once full, the entry used longest ago goes first. */
function remember<K, V>(cache: Map<K, V>, key: K, value: V): void {
  cache.delete(key);
  if (cache.size >= MAX_CACHED_ENTRIES) cache.delete(cache.keys().next().value!);
  cache.set(key, value);
}

const dialect = new SQLiteSyncDialect();

// Every list shape is one SQL text with its values bound, so its statement is prepared once.
const statements = perDatabase(() => new Map<string, Statement>());

function run<T>(db: Db, query: SQL, mode: 'all' | 'get'): T {
  const { sql: text, params } = dialect.sqlToQuery(query);
  const cache = statements(db);
  let statement = cache.get(text);
  if (!statement) {
    statement = db.sqlite.prepare(text);
    remember(cache, text, statement);
  }
  return (mode === 'all' ? statement.all(...params) : statement.get(...params)) as T;
}

interface CachedCount {
  throughId: number;
  count: number;
}

const countCache = perDatabase(() => new Map<string, CachedCount>());

/**
 * How a condition may be served: `seek` uses the indexes that find matches (skip-scan values, the
 * trigram index); `walk` keeps only conditions that filter rows read in another index's order.
 */
type Access = 'seek' | 'walk';

/** The distinct values of a low-cardinality column containing `value`, or null if too many. */
function matchingValues(
  db: Db,
  organizationId: number,
  column: 'category' | 'type',
  value: string,
): string[] | null {
  // A recursive skip scan: each step seeks the next distinct value in (organization, column).
  const distinct = run<Array<{ v: string; hit: 0 | 1 }>>(
    db,
    sql`WITH RECURSIVE d(v) AS (
          SELECT min(${sql.identifier(column)}) FROM events WHERE organization_id = ${organizationId}
          UNION ALL
          SELECT (SELECT min(${sql.identifier(column)}) FROM events
                  WHERE organization_id = ${organizationId} AND ${sql.identifier(column)} > d.v)
          FROM d WHERE d.v IS NOT NULL LIMIT ${MAX_RESOLVED_VALUES + 2})
        SELECT v, ${contains(sql`v`, value)} AS hit FROM d WHERE v IS NOT NULL`,
    'all',
  );
  if (distinct.length > MAX_RESOLVED_VALUES) return null;
  return distinct.filter((row) => row.hit === 1).map((row) => row.v);
}

function usesTrigrams(filter: SearchFilter<EventProperty>, access: Access): boolean {
  // Trigrams need three characters; shorter values are scanned with LIKE.
  return (
    access === 'seek' && filter.property === 'description' && [...String(filter.value)].length >= 3
  );
}

function eventConditions(
  db: Db,
  organizationId: number,
  query: ListQuery<EventProperty>,
  access: Access,
): SQL | undefined {
  const lowCardinality = (column: 'category' | 'type') => (filter: SearchFilter<EventProperty>) => {
    const values = matchingValues(db, organizationId, column, String(filter.value));
    if (values === null) return undefined;
    if (values.length === 0) return sql`0`;
    // Unary plus keeps the planner off this column's index while it walks another order.
    const target = access === 'seek' ? sql.identifier(column) : sql`+${sql.identifier(column)}`;
    return sql`${target} IN (${sql.join(
      values.map((v) => sql`${v}`),
      sql`, `,
    )})`;
  };
  // The planner prefers the organization's index to the trigram matches it cannot estimate.
  const organization = query.filters.some((filter) => usesTrigrams(filter, access))
    ? sql`+${events.organizationId} = ${organizationId}`
    : eq(events.organizationId, organizationId);
  return and(
    organization,
    ...listConditions(query, {
      columns: EVENT_COLUMNS,
      windowColumn: events.timestamp,
      conditions: {
        category: lowCardinality('category'),
        type: lowCardinality('type'),
        description: (filter) => {
          const value = String(filter.value);
          if (!usesTrigrams(filter, access)) return undefined;
          const phrase = `"${value.replaceAll('"', '""')}"`;
          return sql`${events.id} IN (SELECT rowid FROM events_description_fts
                     WHERE events_description_fts MATCH ${phrase})
                     AND ${contains(events.description, value)}`;
        },
      },
    }),
  );
}

function filterKey(organizationId: number, query: ListQuery<EventProperty>): string {
  return JSON.stringify([organizationId, query.filters, query.window]);
}

function countMatching(db: Db, organizationId: number, query: ListQuery<EventProperty>): number {
  const key = filterKey(organizationId, query);
  const cache = countCache(db);
  const cached = cache.get(key);
  const { top } = run<{ top: number | null }>(db, sql`SELECT max(id) AS top FROM events`, 'get');
  const throughId = top ?? 0;
  let count: number;
  if (cached && cached.throughId === throughId) {
    count = cached.count;
  } else if (cached && throughId - cached.throughId <= MAX_COUNT_DELTA) {
    // NOT INDEXED: only the rowid range of the new events is read, whatever else matches.
    const delta = run<{ n: number }>(
      db,
      sql`SELECT count(*) AS n FROM events NOT INDEXED
          WHERE id > ${cached.throughId} AND ${eventConditions(db, organizationId, query, 'walk')}`,
      'get',
    );
    count = cached.count + delta.n;
  } else {
    count = run<{ n: number }>(
      db,
      sql`SELECT count(*) AS n FROM events
          WHERE ${eventConditions(db, organizationId, query, 'seek')}`,
      'get',
    ).n;
  }
  remember(cache, key, { throughId, count });
  return count;
}

/**
 * Walking, the order's index reads rows in order and LIMIT stops early. Seeking, unary plus
 * keeps the planner off that index, which it would otherwise prefer to avoid a sort even when
 * another index finds the few matches at once.
 */
function orderBy(order: ListQuery<EventProperty>['order'], access: Access): SQL {
  const direction = sql.raw(order.direction);
  const column = EVENT_COLUMNS[order.property];
  return access === 'walk'
    ? sql`${column} ${direction}, ${events.id} ${direction}`
    : sql`+${column} ${direction}, +${events.id} ${direction}`;
}

interface StoredEvent extends Omit<EventRow, 'attributes'> {
  attributes: string | null;
}

const SELECTED_COLUMNS = sql.raw(
  `id, organization_id AS organizationId, import_key AS importKey, timestamp,
   session_id AS sessionId, conversation_id AS conversationId, source, source_id AS sourceId,
   category, type, user_id AS userId, description, attributes`,
);

function readPage(
  db: Db,
  organizationId: number,
  query: ListQuery<EventProperty>,
  totalCount: number,
  organizationCount: number,
): EventRow[] {
  const end = Math.min(query.offset + query.limit, totalCount);
  if (query.offset >= end) return [];
  // Past the middle, the page is near the other end: skip fewer rows in the reverse order.
  const reverse = query.offset > totalCount - end;
  const order: ListQuery<EventProperty>['order'] = reverse
    ? { ...query.order, direction: query.order.direction === 'asc' ? 'desc' : 'asc' }
    : query.order;
  const skip = reverse ? totalCount - end : query.offset;
  // A time window alone is a range of the timestamp index, which walks it in order.
  const access: Access =
    query.filters.length === 0 || totalCount >= organizationCount * WALK_ORDER_SHARE
      ? 'walk'
      : 'seek';
  const rows = run<StoredEvent[]>(
    db,
    sql`SELECT ${SELECTED_COLUMNS} FROM events
        WHERE ${eventConditions(db, organizationId, query, access)}
        ORDER BY ${orderBy(order, access)}
        LIMIT ${end - query.offset} OFFSET ${skip}`,
    'all',
  );
  if (reverse) rows.reverse();
  return rows.map((row) => ({
    ...row,
    attributes: row.attributes === null ? null : (JSON.parse(row.attributes) as JsonObject),
  }));
}

const UNFILTERED = { filters: [], window: {} };

function isFiltered(query: ListQuery<EventProperty>): boolean {
  return (
    query.filters.length > 0 || query.window.start !== undefined || query.window.end !== undefined
  );
}

export async function listEvents(
  db: Db,
  organizationId: number,
  query: ListQuery<EventProperty>,
): Promise<{ rows: EventRow[]; totalCount: number }> {
  return db.sqlite
    .transaction(() => {
      const totalCount = countMatching(db, organizationId, query);
      const organizationCount = isFiltered(query)
        ? countMatching(db, organizationId, { ...query, ...UNFILTERED })
        : totalCount;
      const rows = readPage(db, organizationId, query, totalCount, organizationCount);
      return { rows, totalCount };
    })
    .deferred();
}

// A page number deep in the events list, turned into a position by the hour counts (schema:
// eventCounts). A page by number skips `offset` events; an OFFSET skips them one by one, so the
// middle of ten million took a second. In the list's default order (timestamp), the events of the
// hours before a page's hour are all skipped: the counts add those up, and the page starts in its
// hour, after the events of later (or earlier) hours, skipping only the rest of that one hour.
// The counts are written in the transaction that writes or removes the events, so a read sees
// counts of exactly the events it sees, and their sum is the list's total_count.
// Which queries they serve: docs/architecture.md, "Reading the events list".

import { sql, type SQL } from 'drizzle-orm';
import type { EventProperty } from '../../vocabulary/events.js';
import type { ListQuery, SortDirection } from '../../vocabulary/list-query.js';
import { ByteBoundedLru, perDatabase } from '../engine/caches.js';
import type { Db } from '../engine/client.js';
import { selectRows, type Steps } from '../engine/portable-sql.js';
import { events } from '../schema/sqlite.js';
import {
  eventsAbove,
  isCounted,
  MAX_CACHED_BYTES,
  NOTHING_RESOLVED,
  UNFILTERED,
  type Access,
  type ResolvedValues,
} from './event-conditions.js';
import type { EventsVersion } from './event-conditions.js';

/** The counts' rows that select a query's events: a property ('' for all) and its values. */
interface CountedSelection {
  property: string;
  values: readonly string[];
}

/** The events of one hour (`YYYY-MM-DDTHH`, UTC) that a query selects. */
export interface HourCount {
  hour: string;
  count: number;
}

const EVERY_EVENT: CountedSelection = { property: '', values: [''] };

function countedSelection(
  query: ListQuery<EventProperty>,
  resolved: ResolvedValues,
): CountedSelection | null {
  if (query.after || query.order.property !== 'timestamp') return null;
  if (query.window.start !== undefined || query.window.end !== undefined) return null;
  if (query.filters.length === 0) return EVERY_EVENT;
  const [filter, ...others] = query.filters;
  if (others.length > 0 || !isCounted(filter!.property)) return null;
  const values = resolved.values.get(filter!);
  return values ? { property: filter!.property, values } : null;
}

interface KeptHours extends EventsVersion {
  /** Oldest first. */
  hours: HourCount[];
}

/** What an hour takes in the cache: its text, its count and the array's slot. */
const HOUR_BYTES = 64;
/** Per process and database: a year of hours of one query is about 560 KB. */
const keptHours = perDatabase(
  () => new ByteBoundedLru<KeptHours>(MAX_CACHED_BYTES, ({ hours }) => hours.length * HOUR_BYTES),
);
/**
 * Up to this many new event ids since kept hours are read as events (which hours they fell in),
 * so only those hours' counts are read again; beyond, all of them are.
 */
const MAX_HOURS_DELTA = 20_000;

function* readHours(
  organizationId: number,
  selection: CountedSelection,
  only?: readonly string[],
): Steps<HourCount[]> {
  const values = sql.join(
    selection.values.map((value) => sql`${value}`),
    sql`, `,
  );
  const hours = only
    ? sql`AND hour IN (${sql.join(
        only.map((hour) => sql`${hour}`),
        sql`, `,
      )})`
    : sql``;
  return yield* selectRows<HourCount>(
    sql`SELECT hour, sum(event_count) AS count FROM event_counts
        WHERE organization_id = ${organizationId} AND property = ${selection.property}
          AND value IN (${values}) ${hours}
        GROUP BY hour ORDER BY hour`,
  );
}

/**
 * The hours of the query's events, oldest first, with how many each holds, or null when the
 * counts do not serve the query. A year is 8,760 rows, and turning them into objects took most
 * of a page's time, so they are kept per query and version (as counts are: events.ts). After new
 * events, only the hours they fell in are read again: an organization's events with ids up to
 * the kept version's are never added later, and none was removed while the removed count holds.
 */
export function* hourCounts(
  db: Db,
  organizationId: number,
  query: ListQuery<EventProperty>,
  resolved: ResolvedValues,
  version: EventsVersion,
): Steps<HourCount[] | null> {
  const selection = countedSelection(query, resolved);
  if (!selection) return null;
  if (selection.values.length === 0) return [];
  const key = JSON.stringify([organizationId, selection.property, selection.values]);
  const cache = keptHours(db);
  const kept = cache.get(key);
  const reusable = kept?.removed === version.removed ? kept : undefined;
  let hours: HourCount[];
  if (reusable && reusable.throughId === version.throughId) {
    hours = reusable.hours;
  } else if (
    // On PostgreSQL a request in an older snapshot may find hours kept by a newer one.
    reusable &&
    reusable.throughId < version.throughId &&
    version.throughId - reusable.throughId <= MAX_HOURS_DELTA
  ) {
    // An event's hour as the counting triggers take it (migration 0017, postgres 0013).
    const rows = yield* selectRows<{ hour: string }>(
      sql`SELECT DISTINCT substr(timestamp, 1, 13) AS hour
          FROM ${eventsAbove(db, organizationId, UNFILTERED, NOTHING_RESOLVED, reusable.throughId, version.throughId)}`,
    );
    const touched = rows.map(({ hour }) => hour);
    hours =
      touched.length === 0
        ? reusable.hours
        : mergeHours(reusable.hours, touched, yield* readHours(organizationId, selection, touched));
  } else {
    hours = yield* readHours(organizationId, selection);
  }
  cache.set(key, { ...version, hours });
  return hours;
}

/** `hours` with the `touched` ones replaced by their counts read again (absent: none left). */
function mergeHours(
  hours: readonly HourCount[],
  touched: readonly string[],
  reread: readonly HourCount[],
): HourCount[] {
  const replaced = new Set(touched);
  const kept = hours.filter(({ hour }) => !replaced.has(hour));
  // New events fall mostly in the latest hours: both lists are sorted, so a merge keeps it so.
  const merged: HourCount[] = [];
  let i = 0;
  for (const hour of reread) {
    while (i < kept.length && kept[i]!.hour < hour.hour) merged.push(kept[i++]!);
    merged.push(hour);
  }
  return merged.concat(kept.slice(i));
}

export const countOf = (hours: readonly HourCount[]) =>
  hours.reduce((total, hour) => total + hour.count, 0);

/**
 * Where the page skipping `offset` events starts: the condition that leaves out the hours before
 * its own in the page order, and how many events of its hour it still skips; null past the end.
 */
export function pageStart(
  hours: readonly HourCount[],
  offset: number,
  direction: SortDirection,
  access: Access,
): { from: SQL; skip: number } | null {
  let before = 0;
  for (let i = 0; i < hours.length; i += 1) {
    const { hour, count } = hours[direction === 'asc' ? i : hours.length - 1 - i]!;
    if (before + count > offset) {
      return { from: hourBound(hour, direction, access), skip: offset - before };
    }
    before += count;
  }
  return null;
}

/**
 * Newest first, the events up to the end of `hour`; oldest first, those from its start. Stored
 * timestamps are whole ISO text to the millisecond (domain/timestamps.ts), so both bounds are
 * too and compare as they do. Seeking (SQLite), the bound must not draw the planner to the
 * timestamp index (events.ts, orderBy).
 */
function hourBound(hour: string, direction: SortDirection, access: Access): SQL {
  const column = access === 'seek' ? sql`+${events.timestamp}` : events.timestamp;
  return direction === 'desc'
    ? sql`${column} <= ${`${hour}:59:59.999Z`}`
    : sql`${column} >= ${`${hour}:00:00.000Z`}`;
}

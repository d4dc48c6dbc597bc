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
import type { Db } from '../engine/client.js';
import { selectRows, type Steps } from '../engine/portable-sql.js';
import { events } from '../schema/sqlite.js';
import {
  eventsAbove,
  isCounted,
  isWindowed,
  NOTHING_RESOLVED,
  UNFILTERED,
  type Access,
  type EventSelection,
  type ResolvedValues,
} from './event-conditions.js';

/** The counts' rows that select a query's events: a property ('' for all) and its values. */
export interface CountedSelection {
  property: string;
  values: readonly string[];
}

/** The events of one hour (`YYYY-MM-DDTHH`, UTC) that a query selects. */
export interface HourCount {
  hour: string;
  count: number;
}

const EVERY_EVENT: CountedSelection = { property: '', values: [''] };

/**
 * The counts' rows that hold the events `selection` matches, or null when no rows do: a window,
 * two searches, or a search of another property or of too many values to list.
 */
export function countedRows(
  selection: EventSelection,
  resolved: ResolvedValues,
): CountedSelection | null {
  if (isWindowed(selection)) return null;
  if (selection.filters.length === 0) return EVERY_EVENT;
  const [filter, ...others] = selection.filters;
  if (others.length > 0 || !isCounted(filter!.property)) return null;
  const values = resolved.values.get(filter!);
  return values ? { property: filter!.property, values } : null;
}

/** The counts' rows whose hours place the query's page: a page by number of the default order. */
export function countedSelection(
  query: ListQuery<EventProperty>,
  resolved: ResolvedValues,
): CountedSelection | null {
  if (query.after || query.order.property !== 'timestamp') return null;
  return countedRows(query, resolved);
}

const textList = (texts: readonly string[]) =>
  sql.join(
    texts.map((text) => sql`${text}`),
    sql`, `,
  );

/**
 * How many events the counts' rows hold: what counting the events they select gives, in the same
 * snapshot, from a row per value and hour instead of one per event.
 */
export function* countOfRows(organizationId: number, selection: CountedSelection): Steps<number> {
  if (selection.values.length === 0) return 0;
  const [total] = yield* selectRows<{ n: number | null }>(
    sql`SELECT sum(event_count) AS n FROM event_counts
        WHERE organization_id = ${organizationId} AND property = ${selection.property}
          AND value IN (${textList(selection.values)})`,
  );
  return total?.n ?? 0;
}

/** The hours of the selected events, oldest first (with `only`: of those hours alone). */
export function* readHours(
  organizationId: number,
  selection: CountedSelection,
  only?: readonly string[],
): Steps<HourCount[]> {
  const hours = only ? sql`AND hour IN (${textList(only)})` : sql``;
  return yield* selectRows<HourCount>(
    sql`SELECT hour, sum(event_count) AS count FROM event_counts
        WHERE organization_id = ${organizationId} AND property = ${selection.property}
          AND value IN (${textList(selection.values)}) ${hours}
        GROUP BY hour ORDER BY hour`,
  );
}

/**
 * The hours the organization's events with ids in (afterId, throughId] fell in, as the counting
 * triggers take an event's hour (migration 0017, postgres 0013): only their counts can differ
 * from those read at `afterId`.
 */
export function* hoursOfEventsAbove(
  db: Db,
  organizationId: number,
  afterId: number,
  throughId: number,
): Steps<string[]> {
  const rows = yield* selectRows<{ hour: string }>(
    sql`SELECT DISTINCT substr(timestamp, 1, 13) AS hour
        FROM ${eventsAbove(db, organizationId, UNFILTERED, NOTHING_RESOLVED, afterId, throughId)}`,
  );
  return rows.map(({ hour }) => hour);
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

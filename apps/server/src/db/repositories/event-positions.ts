// A page number deep in any order of the events list, turned into a position: a page by number
// skips `offset` events, and an OFFSET skips them one by one through the order's index, so the
// middle of a million took a hundred milliseconds and more while page 0 took a few. The positions
// of every `every`-th event in the query's order (its sort key and id) are read once, in one walk
// of the index, and kept per query and version of the organization's events (as the hour counts
// are: event-pages.ts); a page then starts at the position before it and skips fewer than
// 2 x `every` events.
// How kept positions survive new events: docs/architecture.md, "Reading the events list".

import { and, sql, type SQL } from 'drizzle-orm';
import type { EventProperty } from '../../vocabulary/events.js';
import type { ListPosition, ListQuery } from '../../vocabulary/list-query.js';
import { ByteBoundedLru, perDatabase, stringBytes } from '../engine/caches.js';
import type { Db } from '../engine/client.js';
import { afterPosition } from '../engine/list-sql.js';
import { selectRows, type Steps } from '../engine/portable-sql.js';
import { events } from '../schema/sqlite.js';
import {
  eventConditions,
  eventOrder,
  eventOrderColumns,
  eventsAbove,
  MAX_CACHED_BYTES,
  prefixBound,
  type Access,
  type ResolvedValues,
} from './event-conditions.js';
import type { EventsVersion } from './event-conditions.js';

type Order = ListQuery<EventProperty>['order'];

/** About this many positions are kept per query, at least MIN_EVERY events apart. */
const POSITIONS_PER_QUERY = 1000;
const MIN_EVERY = 50;
/**
 * Up to this many new event ids since the kept positions, the new events before a position are
 * counted (a read of those ids alone); beyond, the positions are read anew.
 */
const MAX_NEW_IDS = 10_000;

interface KeptPositions extends EventsVersion {
  every: number;
  /** positions[k]: the event at rank (k + 1) x every - 1 of the order, at the kept version. */
  positions: ListPosition[];
}

const keptPositions = perDatabase(
  () =>
    new ByteBoundedLru<KeptPositions>(MAX_CACHED_BYTES, ({ positions }) =>
      positions.reduce(
        (total, { value }) => total + 32 + (typeof value === 'string' ? stringBytes(value) : 8),
        0,
      ),
    ),
);

/** The events after `position` in the order, as a condition an index of the order seeks to. */
function after(db: Db, order: Order, position: ListPosition): SQL | undefined {
  return and(
    afterPosition({ order }, eventOrderColumns(db), events.id, position),
    prefixBound(db, order, position),
  );
}

/** Where a page by number starts: the condition leaving out the events before, and the skip. */
export interface PageStart {
  from: SQL | undefined;
  skip: number;
}

/**
 * Where the page skipping `offset` of the query's `totalCount` events starts, or null when an
 * OFFSET costs little (fewer than 2 x every events skipped) or the positions do not serve it.
 */
export function* positionedStart(
  db: Db,
  organizationId: number,
  query: ListQuery<EventProperty>,
  resolved: ResolvedValues,
  version: EventsVersion,
  totalCount: number,
  access: Access,
): Steps<PageStart | null> {
  const every = Math.max(MIN_EVERY, Math.ceil(totalCount / POSITIONS_PER_QUERY));
  // Near either end an OFFSET (from the other end past the middle: events.ts) skips few.
  const fromEnd = totalCount - Math.min(query.offset + query.limit, totalCount);
  if (query.after || Math.min(query.offset, fromEnd) < 2 * every) return null;
  const key = JSON.stringify([organizationId, query.filters, query.window, query.order]);
  const cache = keptPositions(db);
  let kept = cache.get(key);
  const usable =
    kept?.removed === version.removed &&
    kept.throughId <= version.throughId &&
    version.throughId - kept.throughId <= MAX_NEW_IDS;
  if (!usable) {
    kept = {
      ...version,
      every,
      positions: yield* readPositions(db, organizationId, query, resolved, every, access),
    };
    cache.set(key, kept);
  }
  // New events only push positions later: the one before the offset's, or the one before it,
  // starts at or before the page unless more events arrived than lie between two positions.
  for (let k = Math.floor(query.offset / kept!.every) - 1, tries = 0; k >= 0 && tries < 2; k -= 1) {
    tries += 1;
    const position = kept!.positions[k];
    if (!position) continue;
    const start =
      (k + 1) * kept!.every +
      (kept!.throughId === version.throughId
        ? 0
        : yield* newBefore(db, organizationId, query, resolved, kept!.throughId, position));
    if (start <= query.offset) {
      return { from: after(db, query.order, position), skip: query.offset - start };
    }
  }
  return null;
}

/** The sort key and id of every `every`-th event of the query's order, in one walk of it. */
function* readPositions(
  db: Db,
  organizationId: number,
  query: ListQuery<EventProperty>,
  resolved: ResolvedValues,
  every: number,
  access: Access,
): Steps<ListPosition[]> {
  const column = eventOrderColumns(db)[query.order.property];
  const conditions = eventConditions(db, organizationId, query, resolved, access);
  const rows = yield* selectRows<{ sortKey: ListPosition['value']; id: number }>(
    sql`SELECT "sortKey", id FROM (
          SELECT ${column} AS "sortKey", ${events.id} AS id,
                 row_number() OVER (ORDER BY ${eventOrder(db, query.order)}) AS n
          FROM events WHERE ${conditions}) AS ranked
        WHERE n % ${every} = 0 ORDER BY n`,
  );
  return rows.map(({ sortKey, id }) => ({ value: sortKey, id }));
}

/** How many events with ids above `afterId` match the query and sort before `position`. */
function* newBefore(
  db: Db,
  organizationId: number,
  query: ListQuery<EventProperty>,
  resolved: ResolvedValues,
  afterId: number,
  position: ListPosition,
): Steps<number> {
  // Before a position in the order is after it in the reverse order.
  const reverse: Order = {
    ...query.order,
    direction: query.order.direction === 'asc' ? 'desc' : 'asc',
  };
  const [counted] = yield* selectRows<{ n: number }>(
    sql`SELECT count(*) AS n FROM ${eventsAbove(db, organizationId, query, resolved, afterId)}
        AND ${afterPosition({ order: reverse }, eventOrderColumns(db), events.id, position)}`,
  );
  return counted!.n;
}

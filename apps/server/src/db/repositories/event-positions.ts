// A page number deep in any order of the events list, turned into a position: a page by number
// skips `offset` events, and an OFFSET skips them one by one through the order's index, so the
// middle of a million took a hundred milliseconds and more while page 0 took a few. The positions
// of every `every`-th event in the query's order (its sort key and id) are read once, in one walk
// of the index, and kept per query and version of the organization's events (as the hour counts
// are: runtime/event-list-memory.ts); a page then starts at the position before it and skips
// fewer than 2 x `every` events.
// How kept positions survive new events: docs/architecture.md, "Reading the events list".

import { and, sql, type SQL } from 'drizzle-orm';
import type { EventProperty } from '../../vocabulary/events.js';
import type { ListPosition, ListQuery } from '../../vocabulary/list-query.js';
import type { Db } from '../engine/client.js';
import { afterPosition, reversedOrder } from '../engine/list-sql.js';
import { selectRows, type Steps } from '../engine/portable-sql.js';
import { events } from '../schema/sqlite.js';
import {
  eventConditions,
  eventOrder,
  eventOrderColumns,
  eventsAbove,
  eventPrefixBound,
  type Access,
  type ResolvedValues,
} from './event-conditions.js';

type Order = ListQuery<EventProperty>['order'];

/** The events after `position` in the order, as a condition an index of the order seeks to. */
export function eventsAfter(db: Db, order: Order, position: ListPosition): SQL | undefined {
  return and(
    afterPosition({ order }, eventOrderColumns(db), events.id, position),
    eventPrefixBound(db, order, position),
  );
}

/** Where a page by number starts: the condition leaving out the events before, and the skip. */
export interface PageStart {
  from: SQL | undefined;
  skip: number;
}

/** The sort key and id of every `every`-th event of the query's order, in one walk of it. */
export function* readPositions(
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
export function* newBefore(
  db: Db,
  organizationId: number,
  query: ListQuery<EventProperty>,
  resolved: ResolvedValues,
  afterId: number,
  position: ListPosition,
): Steps<number> {
  // Before a position in the order is after it in the reverse order.
  const reverse = reversedOrder(query.order);
  const [counted] = yield* selectRows<{ n: number }>(
    sql`SELECT count(*) AS n FROM ${eventsAbove(db, organizationId, query, resolved, afterId)}
        AND ${afterPosition({ order: reverse }, eventOrderColumns(db), events.id, position)}`,
  );
  return counted!.n;
}

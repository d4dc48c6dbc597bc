// Retention's writes: which organizations keep events for how long, and the removal of their events
// older than that, a bounded batch per transaction. Each batch also adds to the organization's
// tally of removed events (events_removed, events_removed_through) in the same transaction, so
// whoever reads events sees a removal and its tally together: the events list's version
// (event-conditions.ts) moves with every removal, and a stream or webhook position below the
// highest removed id is known to have missed events (eventsRemovedAfter).

import { sql } from 'drizzle-orm';
import type { Db } from '../engine/client.js';
import {
  runSteps,
  runWriteSteps,
  selectRows,
  execute,
  type Steps,
} from '../engine/portable-sql.js';
import { events, organizations } from '../schema/sqlite.js';

/** An organization's own retention window: days, 0 keeps every event, null the server's default. */
export interface OrganizationRetention {
  organizationId: number;
  days: number | null;
}

export async function organizationRetentions(db: Db): Promise<OrganizationRetention[]> {
  return runSteps(db, () =>
    selectRows<OrganizationRetention>(
      sql`SELECT ${organizations.id} AS "organizationId", ${organizations.eventRetentionDays} AS "days"
          FROM ${organizations} ORDER BY ${organizations.id}`,
    ),
  );
}

/** Sets the organization's window (null: follow the server's EVENT_RETENTION_DAYS). */
export async function setOrganizationRetention(
  db: Db,
  organizationId: number,
  days: number | null,
): Promise<void> {
  await runWriteSteps(db, () =>
    execute(
      sql`UPDATE ${organizations} SET event_retention_days = ${days}
          WHERE ${organizations.id} = ${organizationId}`,
    ),
  );
}

function* removeOnSqlite(organizationId: number, before: string, limit: number): Steps<number> {
  // The timestamp index finds the oldest first, so a batch reads only rows it removes.
  const doomed = yield* selectRows<{ id: number }>(
    sql`SELECT ${events.id} AS id FROM ${events}
        WHERE ${events.organizationId} = ${organizationId} AND ${events.timestamp} < ${before}
        ORDER BY ${events.timestamp} LIMIT ${limit}`,
  );
  if (doomed.length === 0) return 0;
  const ids = sql.join(
    doomed.map((row) => sql`${row.id}`),
    sql`, `,
  );
  // The description index has external content (migration 0005): an entry is removed by handing
  // it the text it indexed, so it goes before the row that holds the text.
  yield* execute(
    sql`INSERT INTO events_description_fts (events_description_fts, rowid, description)
        SELECT 'delete', id, description FROM events WHERE id IN (${ids})`,
  );
  yield* execute(sql`DELETE FROM events WHERE id IN (${ids})`);
  const highestId = Math.max(...doomed.map((row) => row.id));
  yield* execute(
    sql`UPDATE ${organizations}
        SET events_removed = events_removed + ${doomed.length},
            events_removed_through = max(events_removed_through, ${highestId})
        WHERE ${organizations.id} = ${organizationId}`,
  );
  return doomed.length;
}

/**
 * PostgreSQL: one statement, atomic by itself. Two processes sweeping at once do not count an
 * event twice: the second DELETE waits for the first's row locks and skips the rows it removed,
 * so RETURNING holds only its own.
 */
function* removeOnPostgres(organizationId: number, before: string, limit: number): Steps<number> {
  const [removed] = yield* selectRows<{ count: number }>(
    sql`WITH doomed AS (
          SELECT id FROM events
          WHERE organization_id = ${organizationId} AND timestamp < ${before}
          ORDER BY timestamp LIMIT ${limit}
        ), removed AS (
          DELETE FROM events WHERE id IN (SELECT id FROM doomed) RETURNING id
        ), summary AS (
          SELECT count(*)::int AS count, coalesce(max(id), 0)::bigint AS through_id FROM removed
        ), tallied AS (
          UPDATE organizations
          SET events_removed = events_removed + summary.count,
              events_removed_through = greatest(events_removed_through, summary.through_id)
          FROM summary WHERE organizations.id = ${organizationId} AND summary.count > 0
        )
        SELECT count FROM summary`,
  );
  return removed!.count;
}

/**
 * Removes up to `limit` of the organization's events whose timestamp is before `before` (an ISO
 * date-time as stored), the oldest first, in one transaction; returns how many it removed.
 */
export async function removeEventsBefore(
  db: Db,
  organizationId: number,
  before: string,
  limit: number,
): Promise<number> {
  return runWriteSteps(db, () =>
    db.kind === 'sqlite'
      ? removeOnSqlite(organizationId, before, limit)
      : removeOnPostgres(organizationId, before, limit),
  );
}

/** The highest id of an event retention removed from the organization (0: none). */
export function* removedThroughOf(organizationId: number): Steps<number> {
  const [row] = yield* selectRows<{ through: number }>(
    sql`SELECT ${organizations.eventsRemovedThrough} AS through FROM ${organizations}
        WHERE ${organizations.id} = ${organizationId}`,
  );
  return row?.through ?? 0;
}

/** removedThroughOf, on its own. */
export async function eventsRemovedThrough(db: Db, organizationId: number): Promise<number> {
  return runSteps(db, () => removedThroughOf(organizationId));
}

/**
 * Whether retention removed an event with an id above `position`: a stream or webhook position
 * below the highest removed id may have missed one, so it cannot go on without a gap. The rule
 * of a resumed stream (a 410) and of a webhook replay (a 422); the live feed applies it to each
 * batch it reads (runtime/event-feed.ts).
 */
export async function eventsRemovedAfter(
  db: Db,
  organizationId: number,
  position: number,
): Promise<boolean> {
  return position < (await eventsRemovedThrough(db, organizationId));
}

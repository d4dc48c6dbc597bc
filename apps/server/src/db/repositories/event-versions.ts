// The version of an organization's events: its highest event id, and with it the count of events
// retention removed (event-retention.ts). Every cache of the events list is checked against it
// (events.ts), and the live feed reads positions by the highest id.

import { sql } from 'drizzle-orm';
import type { Db } from '../engine/client.js';
import { prepared, runReadSteps, type Steps } from '../engine/portable-sql.js';
import { events, organizations } from '../schema/sqlite.js';

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

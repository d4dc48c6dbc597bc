// The live feed's reads (runtime/event-feed.ts): each tick, the new events of every watched
// organization, and which of them match each live search, in a fixed number of statements
// however many organizations are watched. Its order is commit order, and it reads by id: an
// organization's events commit in id order (SQLite has one writer; on PostgreSQL each
// organization's writers take turns from id assignment to commit, migration 0003), so once a
// statement has seen an organization's event M, every event of it with an id at or below M is
// in that statement's snapshot, and none can appear later.

import { sql, type SQL } from 'drizzle-orm';
import type { Db } from '../engine/client.js';
import { POSTGRES_SPELLING } from '../engine/spelling.js';
import { prepared, runSteps, selectRows } from '../engine/portable-sql.js';
import { events, organizations } from '../schema/sqlite.js';
import { eventsAbove, NOTHING_RESOLVED } from './event-conditions.js';
import { itemJson, type EventStreamQuery, type FeedEvent } from './events.js';
import { highestEventId } from './event-conditions.js';

/** An organization the feed watches, and the last event id it has read of it. */
export interface WatchedPosition {
  organizationId: number;
  afterId: number;
  /** Whether the highest id retention has removed is wanted too (streams mind removals). */
  withRemovals: boolean;
}

/** What a tick read of one organization. */
export interface NewEvents {
  /** Its events committed after `afterId`, whole, in id order. */
  rows: FeedEvent[];
  /** The position they bring it to: no event of it at or below this can commit later. */
  through: number;
  /** The statement stopped at its limit: more may follow at once. */
  more: boolean;
  /** The highest id retention had removed, read after the events (0 when not asked for). */
  removedThrough: number;
}

/**
 * PostgreSQL's read of the watched organizations' new events: each organization's, from its own
 * position, by its index on (organization, id). Prepared, as the feed asks it five times a
 * second per process: planned each time, its plan cost more than its run (docs/benchmarks.md).
 */
const newEventsOnPostgres = prepared<FeedEvent & { organizationId: number }>(
  sql`SELECT w.organization_id AS "organizationId", e.id, e.json
      FROM unnest(CAST(${sql.placeholder('organizationIds')} AS integer[]),
                  CAST(${sql.placeholder('afterIds')} AS bigint[]))
        AS w(organization_id, after_id)
      CROSS JOIN LATERAL (
        SELECT id, ${itemJson({ kind: 'postgres', spelling: POSTGRES_SPELLING }, null)} AS json FROM events
        WHERE organization_id = w.organization_id AND id > w.after_id
        ORDER BY id LIMIT ${sql.placeholder('limit')}
      ) e
      ORDER BY w.organization_id, e.id`,
);

/**
 * The new events of each watched organization, up to `limit` events a statement, in the same
 * order as `watched`. Three statements on SQLite (its highest id, the events, the removals) and
 * two on PostgreSQL (the events, the removals; one when no removals are asked for), whatever the
 * number of organizations.
 */
export async function readNewEvents(
  db: Db,
  watched: readonly WatchedPosition[],
  limit: number,
): Promise<NewEvents[]> {
  if (watched.length === 0) return [];
  return runSteps(db, function* () {
    const organizationIds = watched.map((w) => w.organizationId);
    let batches: Array<Omit<NewEvents, 'removedThrough'>>;
    if (db.kind === 'sqlite') {
      // SQLite's ids are one sequence for all organizations (highestEventId reads the table's),
      // and each watched position is at or near its highest: one walk of the id range above the
      // lowest position serves them all.
      const highest = yield* highestEventId(db, organizationIds[0]!);
      const lowest = Math.min(...watched.map((w) => w.afterId));
      const rows =
        highest <= lowest
          ? []
          : yield* selectRows<FeedEvent & { organizationId: number }>(
              sql`SELECT ${events.organizationId} AS "organizationId", id, ${itemJson(db, null)} AS json
                  FROM events NOT INDEXED
                  WHERE id > ${lowest} AND id <= ${highest}
                    AND ${events.organizationId} IN (${idList(organizationIds)})
                  ORDER BY id LIMIT ${limit}`,
            );
      const more = rows.length === limit;
      const through = more ? rows.at(-1)!.id : highest;
      const rowsOf = rowsByOrganization(rows, watched);
      batches = watched.map(({ organizationId, afterId }) => ({
        rows: rowsOf.get(organizationId) ?? [],
        through: Math.max(afterId, through),
        more,
      }));
    } else {
      const rows = yield* newEventsOnPostgres({
        organizationIds,
        afterIds: watched.map((w) => w.afterId),
        limit,
      });
      const rowsOf = rowsByOrganization(rows, watched);
      batches = watched.map(({ organizationId, afterId }) => {
        const of = rowsOf.get(organizationId) ?? [];
        return { rows: of, through: of.at(-1)?.id ?? afterId, more: of.length === limit };
      });
    }
    const minded = watched.filter((w) => w.withRemovals).map((w) => w.organizationId);
    const removed = new Map<number, number>();
    if (minded.length > 0) {
      const rows = yield* selectRows<{ id: number; through: number }>(
        sql`SELECT ${organizations.id} AS id, ${organizations.eventsRemovedThrough} AS through
            FROM ${organizations}
            WHERE ${organizations.id} IN (${idList(minded)})`,
      );
      for (const row of rows) removed.set(row.id, row.through);
    }
    return batches.map((batch, index) => ({
      ...batch,
      removedThrough: removed.get(watched[index]!.organizationId) ?? 0,
    }));
  });
}

/** Ids as the items of an SQL `IN` list. */
function idList(ids: readonly number[]): SQL {
  return sql.join(
    ids.map((id) => sql`${id}`),
    sql`, `,
  );
}

/** Each organization's rows, in the order read, past its own watched position. */
function rowsByOrganization(
  rows: ReadonlyArray<FeedEvent & { organizationId: number }>,
  watched: readonly WatchedPosition[],
): Map<number, FeedEvent[]> {
  const afterIdOf = new Map(watched.map((w) => [w.organizationId, w.afterId]));
  const rowsOf = new Map<number, FeedEvent[]>();
  for (const { organizationId, id, json } of rows) {
    if (id <= afterIdOf.get(organizationId)!) continue;
    const of = rowsOf.get(organizationId) ?? [];
    of.push({ id, json });
    rowsOf.set(organizationId, of);
  }
  return rowsOf;
}

/** A live search to match against a batch of an organization's events. */
export interface MatchJob {
  organizationId: number;
  query: EventStreamQuery;
  afterId: number;
  throughId: number;
}

/** For each job, the ids in (afterId, throughId] matching its search pairs and window: one statement. */
export async function matchingEventIdsOf(
  db: Db,
  jobs: readonly MatchJob[],
): Promise<Array<Set<number>>> {
  if (jobs.length === 0) return [];
  const rows = await runSteps(db, () =>
    selectRows<{ job: number; id: number }>(matchStatement(db, jobs)),
  );
  const matches = jobs.map(() => new Set<number>());
  for (const { job, id } of rows) matches[job]!.add(id);
  return matches;
}

/**
 * The jobs' matches, one SELECT each in a UNION ALL. On PostgreSQL each organization's batch is
 * read once into a CTE that takes the table's name, so each job's conditions, written against the
 * events table, read those few rows: planned as one scan of the partitions instead of one per job
 * and partition, which cost more than running it (docs/benchmarks.md, Figures behind the code).
 */
export function matchStatement(db: Db, jobs: readonly MatchJob[]): SQL {
  const branches = sql.join(
    jobs.map(
      ({ organizationId, query, afterId, throughId }, index) =>
        sql`SELECT ${sql.raw(String(index))} AS job, id
            FROM ${eventsAbove(db, organizationId, query, NOTHING_RESOLVED, afterId, throughId)}`,
    ),
    sql` UNION ALL `,
  );
  if (db.kind === 'sqlite') return branches;
  // Each organization's id range, read by its own index walk: organizations' positions differ
  // (one quiet for an hour starts far below the others), so one range for all could span them.
  const ranges = new Map<number, { afterId: number; throughId: number }>();
  for (const { organizationId, afterId, throughId } of jobs) {
    const range = ranges.get(organizationId) ?? { afterId, throughId };
    ranges.set(organizationId, {
      afterId: Math.min(range.afterId, afterId),
      throughId: Math.max(range.throughId, throughId),
    });
  }
  const walks = [...ranges.values()];
  // Inside its own definition the CTE's name still means the table (a WITH without RECURSIVE).
  // OFFSET 0 keeps the planner from flattening the walks into one join, which it hashed over a
  // scan of every partition.
  return sql`WITH events AS MATERIALIZED (
      SELECT batch.*
      FROM unnest(CAST(${sql.param([...ranges.keys()])} AS integer[]),
                  CAST(${sql.param(walks.map((walk) => walk.afterId))} AS bigint[]),
                  CAST(${sql.param(walks.map((walk) => walk.throughId))} AS bigint[]))
        AS w(organization_id, after_id, through_id)
      CROSS JOIN LATERAL (
        SELECT * FROM ${events}
        WHERE ${events.organizationId} = w.organization_id
          AND ${events.id} > w.after_id AND ${events.id} <= w.through_id
        OFFSET 0
      ) AS batch)
    ${branches}`;
}

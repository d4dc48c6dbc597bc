// PostgreSQL's monthly partitions of events (migration 0014): made ahead of the events that go in
// them, and dropped whole by retention once every organization with events in one has a window
// that ended after the month did. SQLite has one table and removes rows (event-retention.ts).
//
// A month is the range ['YYYY-MM', next 'YYYY-MM') of the timestamp text, which sorts as time.
// The partition "events_history" holds everything before the months (the table as migration 0014
// found it), "events_default" whatever no month holds yet.

import { sql } from 'drizzle-orm';
import type { PostgresDb } from '../engine/client.js';
import { isLockTimeout } from '../engine/errors.js';
import {
  execute,
  runSteps,
  runStepsInTransaction,
  selectRows,
  type Steps,
} from '../engine/portable-sql.js';
import { eventWriteTurn } from './sessions.js';

/** Months made ahead of the current one: events dated up to three months on go in their own. */
export const MONTHS_AHEAD = 3;
/**
 * Any constant: the advisory lock class under which one process at a time changes the partitions
 * (taken before the transaction reads anything: runStepsInTransaction's turns).
 */
const PARTITIONS_LOCK = [{ lockClass: 0x6167_6c70, key: 0 }]; // "aglp"
/**
 * How long a drop waits for the table's lock: every query of events waits behind a drop that
 * waits, so it gives up soon and the next sweep tries again.
 */
const DROP_LOCK_TIMEOUT_MS = 100;

export interface EventPartition {
  name: string;
  /** The first month it holds ('YYYY-MM'); null: everything before `until` (or the default). */
  from: string | null;
  /** The month it ends before; null: the default partition. */
  until: string | null;
}

const BOUND = /FROM \((?:'(\d{4}-\d{2})'|MINVALUE)\) TO \('(\d{4}-\d{2})'\)/;

function* partitionsOf(): Steps<EventPartition[]> {
  const rows = yield* selectRows<{ name: string; bound: string }>(
    sql`SELECT c.relname AS name, pg_get_expr(c.relpartbound, c.oid) AS bound
          FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
         WHERE i.inhparent = 'events'::regclass
         ORDER BY 1`,
  );
  return rows.map(({ name, bound }) => {
    const match = BOUND.exec(bound);
    return { name, from: match?.[1] ?? null, until: match?.[2] ?? null };
  });
}

/** The events partitions, months in order, then the default. */
export function eventPartitions(db: PostgresDb): Promise<EventPartition[]> {
  return runSteps(db, partitionsOf);
}

/** 'YYYY-MM' of `time` plus `months`. */
function monthOf(time: number, months = 0): string {
  const date = new Date(time);
  return new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + months, 1))
    .toISOString()
    .slice(0, 7);
}

/** A month as a partition bound: only monthOf's 'YYYY-MM' text reaches DDL, never a request's. */
function bound(month: string) {
  return sql.raw(`'${month}'`);
}

/**
 * Makes the partitions of the current month and MONTHS_AHEAD after it that are missing (a month
 * the history partition already covers needs none). Events of such a month that waited in the
 * default partition move to it, ids and all, without touching counts: the move writes the
 * partitions directly, below the parent's triggers. Returns the names made.
 */
export function ensureEventPartitions(db: PostgresDb, now = Date.now()): Promise<string[]> {
  return runStepsInTransaction(
    db,
    function* () {
      const partitions = yield* partitionsOf();
      const covered = (month: string) =>
        partitions.some(
          ({ from, until }) => until !== null && (from ?? '') <= month && month < until,
        );
      const made: string[] = [];
      for (let ahead = 0; ahead <= MONTHS_AHEAD; ahead += 1) {
        const month = monthOf(now, ahead);
        if (covered(month)) continue;
        const name = `events_${month.replace('-', '_')}`;
        const until = monthOf(now, ahead + 1);
        const table = sql.identifier(name);
        yield* execute(sql`CREATE TABLE ${table} (LIKE events INCLUDING DEFAULTS)`);
        yield* execute(
          sql`WITH moved AS (
              DELETE FROM events_default WHERE timestamp >= ${month} AND timestamp < ${until}
              RETURNING *
            )
            INSERT INTO ${table} SELECT * FROM moved`,
        );
        yield* execute(
          sql`ALTER TABLE events ATTACH PARTITION ${table}
            FOR VALUES FROM (${bound(month)}) TO (${bound(until)})`,
        );
        made.push(name);
      }
      return made;
    },
    PARTITIONS_LOCK,
  );
}

/**
 * Drops the month partitions (and the history partition) whose every event is past its
 * organization's window: `cutoffs` holds each organization's cutoff timestamp, null when it
 * keeps every event (as does an organization absent). Each drop tallies what it removes per
 * organization (events_removed, from the hour counts; events_removed_through, the highest id) and
 * deletes its hour counts, in the transaction that drops it, under each organization's write
 * turn, as the row-by-row sweep does. A month whose table stays busy past DROP_LOCK_TIMEOUT_MS is
 * left to the next sweep. Returns how many events the drops removed.
 */
export async function dropExpiredEventPartitions(
  db: PostgresDb,
  cutoffs: ReadonlyMap<number, string | null>,
): Promise<number> {
  // A month can go only if some organization's window has passed its end: the others are not
  // locked and weighed, which reads every organization's counts of the month.
  const latestCutoff = [...cutoffs.values()].reduce<string | null>(
    (latest, cutoff) => (cutoff !== null && (latest === null || cutoff > latest) ? cutoff : latest),
    null,
  );
  if (latestCutoff === null) return 0;
  const cutoffOf = (organizationId: number) => cutoffs.get(organizationId) ?? null;
  let removed = 0;
  for (const partition of await eventPartitions(db)) {
    if (partition.until === null || partition.until > latestCutoff) continue;
    try {
      removed += await runStepsInTransaction(
        db,
        () => dropIfExpired(partition, cutoffOf),
        PARTITIONS_LOCK,
      );
    } catch (error) {
      if (!isLockTimeout(error)) throw error;
    }
  }
  return removed;
}

function* dropIfExpired(
  { name, from, until }: EventPartition,
  cutoffOf: (organizationId: number) => string | null,
): Steps<number> {
  const table = sql.identifier(name);
  const hours = sql`hour >= ${from ?? ''} AND hour < ${until}`;
  yield* execute(sql.raw(`SET LOCAL lock_timeout = ${DROP_LOCK_TIMEOUT_MS}`));
  // Nothing enters the month while it is weighed and dropped.
  yield* execute(sql`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
  const held = yield* selectRows<{ organizationId: number; events: number }>(
    sql`SELECT organization_id AS "organizationId", sum(event_count)::int AS events
          FROM event_counts WHERE property = '' AND ${hours}
         GROUP BY organization_id ORDER BY organization_id`,
  );
  // An empty month stays: it may be a month to come, and costs nothing.
  const expired =
    held.length > 0 &&
    held.every(({ organizationId }) => {
      const cutoff = cutoffOf(organizationId);
      return cutoff !== null && cutoff >= until!;
    });
  if (!expired) return 0;
  for (const { organizationId, events } of held) {
    const turn = eventWriteTurn(organizationId);
    yield* execute(sql`SELECT pg_advisory_xact_lock(${turn.lockClass}, ${turn.key})`);
    yield* execute(
      sql`UPDATE organizations
             SET events_removed = events_removed + ${events},
                 events_removed_through = greatest(events_removed_through,
                   coalesce((SELECT max(id) FROM ${table} WHERE organization_id = ${organizationId}), 0))
           WHERE id = ${organizationId}`,
    );
    yield* execute(
      sql`DELETE FROM event_counts WHERE organization_id = ${organizationId} AND ${hours}`,
    );
  }
  yield* execute(sql`DROP TABLE ${table}`);
  return held.reduce((sum, { events }) => sum + events, 0);
}

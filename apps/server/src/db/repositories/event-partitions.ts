// PostgreSQL's monthly partitions of events (migration 0014): made ahead of the events that go in
// them, and dropped whole by retention once every organization with events in one has a window
// that ended after the month did. SQLite has one table and removes rows (event-retention.ts).
//
// A month is the range ['YYYY-MM', next 'YYYY-MM') of the timestamp text, which sorts as time.
// The partition "events_history" holds everything before the months (the table as migration 0014
// found it), "events_default" whatever no month holds yet.

import type pg from 'pg';
import type { PostgresDb } from '../engine/client.js';

/** Months made ahead of the current one: events dated up to three months on go in their own. */
export const MONTHS_AHEAD = 3;
/** Any constant: the advisory lock under which one process at a time changes the partitions. */
const PARTITIONS_LOCK_KEY = 0x6167_6c70; // "aglp"
/** The organizations' write turn (migration 0003), taken before their counts change. */
const WRITE_TURN_LOCK_KEY = 1634167909;
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

async function inTransaction<T>(
  db: PostgresDb,
  work: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  const client = await db.pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock($1)', [PARTITIONS_LOCK_KEY]);
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}

async function partitionsOf(client: pg.PoolClient): Promise<EventPartition[]> {
  const { rows } = await client.query<{ name: string; bound: string }>(
    `SELECT c.relname AS name, pg_get_expr(c.relpartbound, c.oid) AS bound
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
export async function eventPartitions(db: PostgresDb): Promise<EventPartition[]> {
  const client = await db.pool.connect();
  try {
    return await partitionsOf(client);
  } finally {
    client.release();
  }
}

/** 'YYYY-MM' of `time` plus `months`. */
function monthOf(time: number, months = 0): string {
  const date = new Date(time);
  return new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + months, 1))
    .toISOString()
    .slice(0, 7);
}

function nextMonth(month: string): string {
  return monthOf(Date.parse(`${month}-01T00:00:00.000Z`), 1);
}

/**
 * Makes the partitions of the current month and MONTHS_AHEAD after it that are missing (a month
 * the history partition already covers needs none). Events of such a month that waited in the
 * default partition move to it, ids and all, without touching counts: the move writes the
 * partitions directly, below the parent's triggers. Returns the names made.
 */
export async function ensureEventPartitions(db: PostgresDb, now = Date.now()): Promise<string[]> {
  return inTransaction(db, async (client) => {
    const partitions = await partitionsOf(client);
    const covered = (month: string) =>
      partitions.some(
        ({ from, until }) => until !== null && (from ?? '') <= month && month < until,
      );
    const made: string[] = [];
    for (let ahead = 0; ahead <= MONTHS_AHEAD; ahead += 1) {
      const month = monthOf(now, ahead);
      if (covered(month)) continue;
      const name = `events_${month.replace('-', '_')}`;
      const until = nextMonth(month);
      await client.query(`CREATE TABLE "${name}" (LIKE "events" INCLUDING DEFAULTS)`);
      await client.query(
        `WITH moved AS (
           DELETE FROM "events_default" WHERE "timestamp" >= $1 AND "timestamp" < $2 RETURNING *
         )
         INSERT INTO "${name}" SELECT * FROM moved`,
        [month, until],
      );
      await client.query(
        `ALTER TABLE "events" ATTACH PARTITION "${name}" FOR VALUES FROM ('${month}') TO ('${until}')`,
      );
      made.push(name);
    }
    return made;
  });
}

/**
 * Drops the month partitions (and the history partition) whose every event is past its
 * organization's window: `cutoffOf` gives an organization's cutoff timestamp, null when it keeps
 * every event. Each drop tallies what it removes per organization (events_removed, from the hour
 * counts; events_removed_through, the highest id) and deletes its hour counts, in the transaction
 * that drops it, under each organization's write turn, as the row-by-row sweep does. Returns how
 * many events the drops removed.
 */
export async function dropExpiredEventPartitions(
  db: PostgresDb,
  cutoffOf: (organizationId: number) => string | null,
): Promise<number> {
  let removed = 0;
  for (const partition of await eventPartitions(db)) {
    if (partition.until === null) continue;
    removed += await dropIfExpired(db, partition, cutoffOf);
  }
  return removed;
}

async function dropIfExpired(
  db: PostgresDb,
  { name, from, until }: EventPartition,
  cutoffOf: (organizationId: number) => string | null,
): Promise<number> {
  try {
    return await inTransaction(db, async (client) => {
      await client.query(`SET LOCAL lock_timeout = ${DROP_LOCK_TIMEOUT_MS}`);
      // Nothing enters the month while it is weighed and dropped.
      await client.query(`LOCK TABLE "${name}" IN ACCESS EXCLUSIVE MODE`);
      const { rows: held } = await client.query<{ organization_id: number; events: number }>(
        `SELECT organization_id, sum(event_count)::int AS events FROM event_counts
          WHERE property = '' AND hour >= $1 AND hour < $2
          GROUP BY organization_id ORDER BY organization_id`,
        [from ?? '', until!],
      );
      // An empty month stays: it may be a month to come, and costs nothing.
      const expired =
        held.length > 0 &&
        held.every(({ organization_id }) => {
          const cutoff = cutoffOf(organization_id);
          return cutoff !== null && cutoff >= until!;
        });
      if (!expired) return 0;
      for (const { organization_id: organizationId, events } of held) {
        await client.query('SELECT pg_advisory_xact_lock($1, $2)', [
          WRITE_TURN_LOCK_KEY,
          organizationId,
        ]);
        await client.query(
          `UPDATE organizations
              SET events_removed = events_removed + $2,
                  events_removed_through = greatest(events_removed_through,
                    coalesce((SELECT max(id) FROM "${name}" WHERE organization_id = $1), 0))
            WHERE id = $1`,
          [organizationId, events],
        );
        await client.query(
          `DELETE FROM event_counts WHERE organization_id = $1 AND hour >= $2 AND hour < $3`,
          [organizationId, from ?? '', until!],
        );
      }
      await client.query(`DROP TABLE "${name}"`);
      return held.reduce((sum, { events }) => sum + events, 0);
    });
  } catch (error) {
    // Busy: a read or a write held the table past the lock timeout. The next sweep tries again.
    if ((error as { code?: string }).code === '55P03') return 0;
    throw error;
  }
}

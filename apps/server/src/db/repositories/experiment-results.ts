// An experiment's results as stored: routed sessions per variant, in all and per time bucket of
// the timeline, from the quarter-hour counts (schema: experimentSessionCounts) and, for parts of
// a quarter, the sessions themselves.

import { sql } from 'drizzle-orm';
import type { Db } from '../engine/client.js';
import { idEquals, runSteps, selectRows, type Steps } from '../engine/portable-sql.js';
import { experimentSessionCounts, sessions } from '../schema/sqlite.js';

/**
 * Routed sessions per variant id (variants without sessions are absent), added up from the
 * experiment's quarter-hour counts.
 */
export async function sessionCountsByVariant(
  db: Db,
  experimentId: number,
): Promise<Map<number, number>> {
  const rows = await runSteps(db, () =>
    selectRows<{ variantId: number; n: number }>(
      sql`SELECT ${experimentSessionCounts.variantId} AS "variantId",
          sum(${experimentSessionCounts.sessionCount}) AS "n"
        FROM ${experimentSessionCounts}
        WHERE ${idEquals(experimentSessionCounts.experimentId, experimentId)}
        GROUP BY ${experimentSessionCounts.variantId}`,
    ),
  );
  return new Map(rows.map((r) => [r.variantId, r.n]));
}

export interface TimelineCount {
  bucket: number;
  variantId: number;
  n: number;
}

const QUARTER_HOUR_MS = 15 * 60_000;

/** Bucket `bucket`'s time range `[from, to)`, as ISO text. */
type BucketRange = readonly [bucket: number, from: string, to: string];

/**
 * Splits each bucket `[bounds[i], bounds[i + 1])` into its whole quarter hours, counted in
 * experiment_session_counts, and what is left at either end, counted from the sessions
 * themselves. Buckets of hours and days start on quarter hours in every zone today, so the ends
 * are empty unless the zone's offset then was not a multiple of 15 minutes.
 */
function splitBuckets(bounds: readonly string[]) {
  const quarters: BucketRange[] = [];
  const ends: BucketRange[] = [];
  const iso = (instant: number) => new Date(instant).toISOString();
  for (let bucket = 0; bucket + 1 < bounds.length; bucket += 1) {
    const [from, to] = [bounds[bucket]!, bounds[bucket + 1]!];
    const firstQuarter = Math.ceil(Date.parse(from) / QUARTER_HOUR_MS) * QUARTER_HOUR_MS;
    const endOfQuarters = Math.floor(Date.parse(to) / QUARTER_HOUR_MS) * QUARTER_HOUR_MS;
    if (firstQuarter >= endOfQuarters) {
      ends.push([bucket, from, to]);
      continue;
    }
    quarters.push([bucket, iso(firstQuarter), iso(endOfQuarters)]);
    if (from < iso(firstQuarter)) ends.push([bucket, from, iso(firstQuarter)]);
    if (iso(endOfQuarters) < to) ends.push([bucket, iso(endOfQuarters), to]);
  }
  return { quarters, ends };
}

/** Sessions per bucket and variant of `table`'s rows whose `time` is in the bucket's range. */
function countsInRanges(
  ranges: readonly BucketRange[],
  experimentId: number,
  { table, time, variantId, sessionCount }: typeof COUNTED_IN_QUARTERS | typeof COUNTED_ONE_BY_ONE,
): Steps<Array<{ bucket: number; variantId: number | null; n: number }>> {
  const rows = ranges.map(
    ([bucket, from, to]) =>
      sql`(CAST(${bucket} AS INTEGER), CAST(${from} AS TEXT), CAST(${to} AS TEXT))`,
  );
  return selectRows(
    sql`WITH ranges (bucket, lo, hi) AS (VALUES ${sql.join(rows, sql`, `)})
      SELECT ranges.bucket AS "bucket", ${variantId} AS "variantId", ${sessionCount} AS "n"
      FROM ranges INNER JOIN ${table}
        ON ${idEquals(table.experimentId, experimentId)}
        AND ${time} >= ranges.lo AND ${time} < ranges.hi
      GROUP BY ranges.bucket, ${variantId}`,
  );
}

const COUNTED_IN_QUARTERS = {
  table: experimentSessionCounts,
  time: experimentSessionCounts.slotStart,
  variantId: experimentSessionCounts.variantId,
  sessionCount: sql`sum(${experimentSessionCounts.sessionCount})`,
};

const COUNTED_ONE_BY_ONE = {
  table: sessions,
  time: sessions.createdAt,
  variantId: sessions.variantId,
  sessionCount: sql`count(*)`,
};

/**
 * Sessions per bucket and variant: every bucket's whole quarter hours in one statement, a VALUES
 * list of ranges joined to the experiment's quarter-hour counts (a range of their primary key
 * each), and any part-quarter ends in another, joined to the sessions' (experiment_id,
 * created_at) index. Buckets and variants without sessions are absent.
 */
export async function sessionCountsByBucket(
  db: Db,
  experimentId: number,
  bounds: readonly string[],
): Promise<TimelineCount[]> {
  const { quarters, ends } = splitBuckets(bounds);
  const counted = await runSteps(db, function* () {
    const inQuarters =
      quarters.length === 0
        ? []
        : yield* countsInRanges(quarters, experimentId, COUNTED_IN_QUARTERS);
    const inEnds =
      ends.length === 0 ? [] : yield* countsInRanges(ends, experimentId, COUNTED_ONE_BY_ONE);
    return [...inQuarters, ...inEnds];
  });
  // A bucket with ends has more than one row per variant.
  const counts = new Map<string, TimelineCount>();
  for (const { bucket, variantId, n } of counted) {
    if (variantId === null || n === 0) continue;
    const key = `${bucket} ${variantId}`;
    const seen = counts.get(key);
    if (seen) seen.n += n;
    else counts.set(key, { bucket, variantId, n });
  }
  return [...counts.values()];
}

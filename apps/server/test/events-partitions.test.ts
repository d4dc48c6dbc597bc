// PostgreSQL's monthly partitions of events (migration 0014, db/repositories/event-partitions.ts):
// the migration turns a table holding events into the partitioned one without changing a byte of
// an event; months made later take their events out of the default partition; retention drops a
// month whose every event expired, with the tallies and counts a row-by-row removal would leave.

import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type PostgresDb } from '../src/db/engine/client.js';
import { migrateDb } from '../src/db/migrate.js';
import { insertValues } from '../src/db/engine/portable-sql.js';
import { events as eventsTable } from '../src/db/schema/sqlite.js';
import { insertEventBatch } from '../src/db/repositories/event-import.js';
import { ensureEventPartitions, eventPartitions } from '../src/db/repositories/event-partitions.js';
import { setOrganizationRetention } from '../src/db/repositories/event-retention.js';
import { createOrganization } from '../src/db/repositories/organizations.js';
import { migrateThrough } from './support/partial-migration.js';
import { recordStatements } from './support/sent-statements.js';
import { sweepExpiredEvents } from '../src/use-cases/event-retention.js';
import {
  insertTestEvents,
  onPostgres,
  POSTGRES_ADMIN_URL,
  postgresUrlOf,
  queryTestDb,
  runDatabasePrefix,
  toImport,
  withAdmin,
  type TestEvent,
} from './support/test-database.js';

const ADMIN_URL = POSTGRES_ADMIN_URL!;
/** The last migration before the partitions. */
const BEFORE_PARTITIONS = '0013_event_counts';

/** Every event as PostgreSQL renders its whole row, in id order. */
async function eventRows(db: PostgresDb): Promise<string[]> {
  const rows = await queryTestDb<{ row: string }>(
    db,
    sql`SELECT row_to_json(e)::text AS row FROM events e ORDER BY id`,
  );
  return rows.map(({ row }) => row);
}

async function countRows(db: PostgresDb): Promise<string[]> {
  const rows = await queryTestDb<{ row: string }>(
    db,
    sql`SELECT row_to_json(c)::text AS row FROM event_counts c
        ORDER BY organization_id, property, value, hour`,
  );
  return rows.map(({ row }) => row);
}

async function partitionOf(db: PostgresDb, id: number): Promise<string> {
  const [row] = await queryTestDb<{ partition: string }>(
    db,
    sql`SELECT tableoid::regclass::text AS partition FROM events WHERE id = ${id}`,
  );
  return row!.partition;
}

/** Events of `organizationId` across months, with every column set and some left NULL. */
function monthsOfEvents(
  organizationId: number,
  months: readonly string[],
  perMonth: number,
): TestEvent[] {
  return months.flatMap((month, m) =>
    Array.from({ length: perMonth }, (_, i) => ({
      organizationId,
      timestamp: `${month}-${String(1 + (i % 28)).padStart(2, '0')}T${String(i % 24).padStart(2, '0')}:00:00.${String(i % 1000).padStart(3, '0')}Z`,
      sessionId: `s-${m}-${i % 7}`,
      conversationId: i % 3 === 0 ? null : `c-${i}`,
      source: ['phone', 'sms', null][i % 3],
      sourceId: `src-${i}`,
      category: ['tool', 'llm', 'session'][i % 3],
      type: `type-${i % 5}`,
      userId: i % 4 === 0 ? null : `+1415555${String(i).padStart(4, '0')}`,
      description: `event ${i} of ${month}, naïve 🎉 text`,
      attributes: i % 2 === 0 ? { n: i, nested: { ok: true }, list: [1, 'two'] } : null,
    })),
  );
}

describe.runIf(onPostgres)('events in time partitions', () => {
  const opened: PostgresDb[] = [];

  afterAll(async () => {
    for (const db of opened) await db.close();
  });

  /** A new database, migrated up to `through` (a migration's tag) or all the way. */
  async function newDatabase(through?: string): Promise<PostgresDb> {
    const name = `${runDatabasePrefix(process.env.AGENTLINE_TEST_RUN!)}partitions_${process.pid}_${opened.length}`;
    await withAdmin(ADMIN_URL, (admin) => admin.query(`CREATE DATABASE "${name}"`));
    const db = createDb(postgresUrlOf(ADMIN_URL, name)) as PostgresDb;
    opened.push(db);
    if (through) await migrateThrough(db, through);
    else await migrateDb(db);
    return db;
  }

  it('keeps every event of a populated table byte for byte through the migration', async () => {
    const db = await newDatabase(BEFORE_PARTITIONS);
    const acme = (await createOrganization(db, 'Acme')).id;
    const globex = (await createOrganization(db, 'Globex')).id;
    // Old months, this one, and one far ahead (after the migration, in the history partition).
    await insertTestEvents(db, monthsOfEvents(acme, ['2024-02', '2026-06', '2031-07'], 60));
    // Imported before: with keys, written as the import did then (its conflict target was the
    // key alone, which the database no longer has once migrated).
    const imported = toImport(monthsOfEvents(globex, ['2025-12', '2026-01'], 50), 'before');
    await queryTestDb(
      db,
      sql`INSERT INTO ${eventsTable} ${insertValues(
        eventsTable,
        imported.map((event) => ({ organizationId: globex, ...event })),
      )}`,
    );
    const events = await eventRows(db);
    const counts = await countRows(db);
    expect(events).toHaveLength(280);

    await migrateDb(db);

    expect(await eventRows(db)).toEqual(events);
    expect(await countRows(db)).toEqual(counts);
    const partitions = await eventPartitions(db);
    // Everything stored stays in the history partition, up to the month after the latest event.
    expect(partitions.find(({ name }) => name === 'events_history')).toEqual({
      name: 'events_history',
      from: null,
      until: '2031-08',
    });
    expect(partitions.find(({ name }) => name === 'events_default')?.until).toBeNull();
    // The same import again adds nothing; new events continue the ids and are counted.
    expect(await insertEventBatch(db, globex, imported)).toBe(0);
    const highest = JSON.parse(events.at(-1)!) as { id: number };
    await insertTestEvents(db, [{ organizationId: acme, timestamp: '2032-01-01T00:00:00.000Z' }]);
    const [added] = await queryTestDb<{ id: number }>(db, sql`SELECT max(id) AS id FROM events`);
    expect(added!.id).toBeGreaterThan(highest.id);
    expect(await partitionOf(db, added!.id)).toBe('events_default');
    const [acmeCount] = await queryTestDb<{ n: number }>(
      db,
      sql`SELECT sum(event_count)::int AS n FROM event_counts WHERE organization_id = ${acme} AND property = ''`,
    );
    expect(acmeCount!.n).toBe(181);
  });

  describe('on a migrated database', () => {
    let db: PostgresDb;
    beforeAll(async () => {
      db = await newDatabase();
    });

    it('has this month and the next three covered from the migration on', async () => {
      const partitions = await eventPartitions(db);
      const now = new Date();
      for (const ahead of [0, 1, 2, 3]) {
        const month = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + ahead, 1))
          .toISOString()
          .slice(0, 7);
        // This month is the history partition's on a new database, the others months of their own.
        const holder = partitions.find(
          ({ from, until }) => until !== null && (from ?? '') <= month && month < until,
        );
        expect(holder?.name).toBe(
          ahead === 0 ? 'events_history' : `events_${month.replace('-', '_')}`,
        );
      }
    });

    it('moves the events a new month holds out of the default partition, ids and counts unchanged', async () => {
      const initech = (await createOrganization(db, 'Initech')).id;
      await insertTestEvents(db, monthsOfEvents(initech, ['2040-05', '2040-06'], 30));
      const events = await eventRows(db);
      const counts = await countRows(db);
      const ids = events.map((row) => (JSON.parse(row) as { id: number }).id);
      expect(await partitionOf(db, ids[0]!)).toBe('events_default');

      expect(await ensureEventPartitions(db, Date.parse('2040-05-15T00:00:00Z'))).toEqual([
        'events_2040_05',
        'events_2040_06',
        'events_2040_07',
        'events_2040_08',
      ]);
      expect(await eventRows(db)).toEqual(events);
      expect(await countRows(db)).toEqual(counts);
      expect(await partitionOf(db, ids[0]!)).toBe('events_2040_05');
      expect(await partitionOf(db, ids.at(-1)!)).toBe('events_2040_06');
      // Made already: nothing to do.
      expect(await ensureEventPartitions(db, Date.parse('2040-05-20T00:00:00Z'))).toEqual([]);
    });

    it('drops a month whose every event expired, tallied as the row-by-row sweep would', async () => {
      const hooli = (await createOrganization(db, 'Hooli')).id;
      const keeper = (await createOrganization(db, 'Keeper')).id;
      await ensureEventPartitions(db, Date.parse('2050-01-10T00:00:00Z'));
      await insertTestEvents(db, monthsOfEvents(hooli, ['2050-01', '2050-02'], 40));
      await insertTestEvents(db, monthsOfEvents(keeper, ['2050-02'], 10));
      await setOrganizationRetention(db, hooli, 30);
      await setOrganizationRetention(db, keeper, 0);
      const [hooliHighest] = await queryTestDb<{ id: number }>(
        db,
        sql`SELECT max(id) AS id FROM events WHERE organization_id = ${hooli}`,
      );

      // Hooli's window ends on 2050-03-11: January alone is Hooli's and wholly past it; February
      // also holds Keeper's events, kept for ever, so Hooli's go from it row by row.
      const removed = await sweepExpiredEvents(db, {
        defaultDays: 0,
        now: Date.parse('2050-04-10T00:00:00Z'),
      });
      expect(removed).toBe(80);
      const names = (await eventPartitions(db)).map(({ name }) => name);
      expect(names).not.toContain('events_2050_01');
      expect(names).toContain('events_2050_02');
      const [tally] = await queryTestDb<{ removed: number; through: number }>(
        db,
        sql`SELECT events_removed AS removed, events_removed_through AS through
            FROM organizations WHERE id = ${hooli}`,
      );
      expect(tally).toEqual({ removed: 80, through: hooliHighest!.id });
      const left = await queryTestDb<{ organization_id: number; n: number }>(
        db,
        sql`SELECT organization_id, count(*)::int AS n FROM events
            WHERE organization_id IN (${hooli}, ${keeper}) GROUP BY 1 ORDER BY 1`,
      );
      expect(left).toEqual([{ organization_id: keeper, n: 10 }]);
      const counted = await queryTestDb<{ organization_id: number; n: number }>(
        db,
        sql`SELECT organization_id, sum(event_count)::int AS n FROM event_counts
            WHERE organization_id IN (${hooli}, ${keeper}) AND property = '' GROUP BY 1 ORDER BY 1`,
      );
      expect(counted).toEqual([{ organization_id: keeper, n: 10 }]);
      expect(
        await queryTestDb(db, sql`SELECT 1 FROM event_counts WHERE organization_id = ${hooli}`),
      ).toEqual([]);
    });

    it("weighs and locks only the months some organization's window has passed", async () => {
      const fresh = await newDatabase();
      const forever = (await createOrganization(fresh, 'Forever')).id;
      const recent = (await createOrganization(fresh, 'Recent')).id;
      await ensureEventPartitions(fresh, Date.parse('2070-01-10T00:00:00Z'));
      await insertTestEvents(fresh, monthsOfEvents(forever, ['2070-01', '2070-02'], 5));
      const sent = recordStatements(fresh.pool);
      const lockedBySweep = async () => {
        sent.length = 0;
        const removed = await sweepExpiredEvents(fresh, {
          defaultDays: 0,
          now: Date.parse('2070-03-20T00:00:00Z'),
        });
        expect(removed).toBe(0);
        return sent.flatMap((text) => /^LOCK TABLE "([^"]+)"/.exec(text)?.[1] ?? []);
      };

      // Every organization keeps its events: no month is read or locked.
      expect(await lockedBySweep()).toEqual([]);
      // Recent's window ends on 2070-02-18: January ended before it and is weighed (Forever's
      // events keep it); February, which ends after it, is not touched.
      await setOrganizationRetention(fresh, recent, 30);
      const locked = await lockedBySweep();
      expect(locked).toContain('events_2070_01');
      expect(locked).not.toContain('events_2070_02');
      expect(locked).not.toContain('events_2070_03');
    });

    it('leaves a month that a reader holds to the rows path, removing the same events', async () => {
      const busy = (await createOrganization(db, 'Busy')).id;
      await ensureEventPartitions(db, Date.parse('2060-01-10T00:00:00Z'));
      await insertTestEvents(db, monthsOfEvents(busy, ['2060-01'], 25));
      await setOrganizationRetention(db, busy, 30);
      // A long read of the month: the drop's lock waits for it, gives up, and the sweep goes on.
      const reader = await db.pool.connect();
      try {
        await reader.query('BEGIN');
        await reader.query('SELECT count(*) FROM events_2060_01');
        const removed = await sweepExpiredEvents(db, {
          defaultDays: 0,
          now: Date.parse('2060-04-10T00:00:00Z'),
        });
        expect(removed).toBe(25);
      } finally {
        await reader.query('COMMIT');
        reader.release();
      }
      expect((await eventPartitions(db)).map(({ name }) => name)).toContain('events_2060_01');
      const [tally] = await queryTestDb<{ removed: number }>(
        db,
        sql`SELECT events_removed AS removed FROM organizations WHERE id = ${busy}`,
      );
      expect(tally!.removed).toBe(25);
    });
  });
});

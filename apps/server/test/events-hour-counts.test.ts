// The events counted per organization, hour and value (schema: eventCounts), which turn a page
// number into a position and give a list's total (event-pages.ts): after every way events are
// written or removed, on a real database, they are exactly what the events table holds, counted
// here in JS; the migration's count of the events stored before it is the same; and a total they
// hold is read from them, in any order.

import { readFileSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { sql, type SQL } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../src/db/engine/client.js';
import { migrateDb } from '../src/db/migrate.js';
import { insertEventBatch } from '../src/db/repositories/event-import.js';
import { readHours } from '../src/db/repositories/event-pages.js';
import { removeEventsBefore } from '../src/db/repositories/event-retention.js';
import { createOrganization } from '../src/db/repositories/organizations.js';
import {
  freshDatabaseUrl,
  insertTestEvents,
  onSqlite,
  queryTestDb,
  toImport,
  type TestEvent,
} from './support/test-database.js';
import { planText } from './support/order-plans.js';
import { withStatements } from './support/sent-statements.js';
import { listQueryOf } from './support/list-queries.js';
import { listEvents } from '../src/runtime/event-list-memory.js';
import { EVENT_LIST } from '../src/domain/events.js';
import type { ListParameters } from '../src/domain/list-query.js';
import type { EventProperty } from '../src/vocabulary/events.js';

interface CountRow {
  organization_id: number;
  property: string;
  value: string;
  hour: string;
  event_count: number;
}

const key = (row: Omit<CountRow, 'event_count'>) =>
  [row.organization_id, row.property, row.value, row.hour].join('|');

/** The counts as the events table implies them: every event in ('', ''), and per value. */
async function countedInJs(db: Db): Promise<Map<string, number>> {
  const stored = await queryTestDb<{
    organization_id: number;
    timestamp: string;
    category: string | null;
    type: string | null;
    source: string | null;
  }>(db, sql`SELECT organization_id, timestamp, category, type, source FROM events`);
  const counts = new Map<string, number>();
  for (const event of stored) {
    const hour = event.timestamp.slice(0, 13);
    const pairs: Array<[string, string | null]> = [
      ['', ''],
      ['category', event.category],
      ['type', event.type],
      ['source', event.source],
    ];
    for (const [property, value] of pairs) {
      if (value === null) continue;
      const k = key({ organization_id: event.organization_id, property, value, hour });
      counts.set(k, (counts.get(k) ?? 0) + 1);
    }
  }
  return counts;
}

async function storedCounts(db: Db): Promise<Map<string, number>> {
  const rows = await queryTestDb<CountRow>(db, sql`SELECT * FROM event_counts`);
  return new Map(rows.map((row) => [key(row), Number(row.event_count)]));
}

async function expectCountsOfEvents(db: Db): Promise<number> {
  const expected = await countedInJs(db);
  // Equal maps: no row missing, none extra (an hour emptied by a removal is gone, not zero).
  expect(await storedCounts(db)).toEqual(expected);
  return expected.size;
}

const HOUR_MS = 3_600_000;
const START = Date.UTC(2026, 2, 1);

/** `n` events from `first` on, 7 minutes apart, so hours hold several; values and NULLs mixed. */
function spreadEvents(organizationId: number, n: number, first = 0): TestEvent[] {
  return Array.from({ length: n }, (_, i) => {
    const k = first + i;
    return {
      organizationId,
      timestamp: new Date(START + k * 7 * 60_000 + (k % 2) * (HOUR_MS - 1)).toISOString(),
      category: k % 5 === 0 ? null : `cat-${k % 3}`,
      type: `type-${k % 4}`,
      source: k % 7 === 0 ? null : k % 2 ? 'agent' : 'user',
    };
  });
}

let databaseUrl: string;
let db: Db;
let acme: number;
let globex: number;

beforeAll(async () => {
  databaseUrl = await freshDatabaseUrl();
  db = createDb(databaseUrl);
  await migrateDb(db);
  acme = (await createOrganization(db, 'Acme')).id;
  globex = (await createOrganization(db, 'Globex')).id;
});

afterAll(async () => {
  await db.close();
  if (onSqlite) rmSync(dirname(databaseUrl), { recursive: true, force: true });
});

describe('the hour counts', () => {
  it('are the events stored after inserts, an import, retention and a plain delete', async () => {
    expect(await expectCountsOfEvents(db)).toBe(0);
    await insertTestEvents(db, spreadEvents(acme, 600));
    await insertTestEvents(db, spreadEvents(globex, 200, 50));
    await expectCountsOfEvents(db);

    // The import's batch insert, with repeats it skips: a skipped event is not counted.
    const imported = toImport(spreadEvents(acme, 300, 1000), 'import');
    expect(await insertEventBatch(db, acme, imported)).toBe(300);
    expect(await insertEventBatch(db, acme, imported.slice(0, 100))).toBe(0);
    await expectCountsOfEvents(db);

    // Retention in small batches, then by hand: hours left empty lose their rows.
    const cut = new Date(START + 30 * HOUR_MS).toISOString();
    let removed = 0;
    for (let batch; (batch = await removeEventsBefore(db, acme, cut, 37)) > 0;) removed += batch;
    expect(removed).toBeGreaterThan(200);
    await queryTestDb(
      db,
      sql`DELETE FROM events WHERE organization_id = ${globex} AND type = 'type-1'`,
    );
    const rows = await expectCountsOfEvents(db);
    const [oldest] = await queryTestDb<{ hour: string }>(
      db,
      sql`SELECT min(hour) AS hour FROM event_counts WHERE organization_id = ${acme}`,
    );
    expect(oldest!.hour).toBe(cut.slice(0, 13));
    expect(rows).toBeGreaterThan(100);
  });

  it('of the events stored before the migration are what its backfill writes', async () => {
    await insertTestEvents(db, spreadEvents(globex, 150, 3000));
    const expected = await expectCountsOfEvents(db);
    await queryTestDb(db, sql`DELETE FROM event_counts`);
    const migration = readFileSync(
      new URL(
        onSqlite
          ? '../drizzle/sqlite/0017_event_counts.sql'
          : '../drizzle/postgres/0013_event_counts.sql',
        import.meta.url,
      ),
      'utf8',
    );
    const backfill = migration.split('--> statement-breakpoint').at(-1)!;
    expect(backfill).toContain('INSERT INTO');
    await queryTestDb(db, sql.raw(backfill));
    expect(await expectCountsOfEvents(db)).toBe(expected);
  });

  it('stay exact while imports into old hours run beside the sweep of those hours', async () => {
    // On PostgreSQL both change the same count rows: the removal takes the organization's write
    // turn first, as inserts do, so each waits for the other instead of deadlocking.
    const initech = (await createOrganization(db, 'Initech')).id;
    await insertTestEvents(db, spreadEvents(initech, 800));
    const cut = new Date(START + 60 * HOUR_MS).toISOString();
    const imports = Array.from({ length: 4 }, (_, writer) =>
      insertEventBatch(db, initech, toImport(spreadEvents(initech, 200, writer * 7), `w${writer}`)),
    );
    const sweep = (async () => {
      while ((await removeEventsBefore(db, initech, cut, 50)) > 0);
    })();
    expect(await Promise.all(imports)).toEqual([200, 200, 200, 200]);
    await sweep;
    await expectCountsOfEvents(db);
  });

  it("are read from their key alone, never from the table's rows", async () => {
    // A list's page number and total come from the organization's hours of one value (or all
    // events): the key holds each count, so the read walks the key's entries alone (SQLite's
    // table is its key, WITHOUT ROWID; PostgreSQL's key INCLUDEs the count, migration 0028),
    // where the rows of one organization's hours are spread over the table's pages.
    const hours = readHours(acme, { property: '', values: [''] }).next().value as { sql: SQL };
    // A few rows are cheaper to read whole than through an index: forbidding that asks which
    // index reads can serve the statement.
    const plan = await planText(db, hours.sql, ['enable_seqscan', 'enable_bitmapscan']);
    expect(plan).toMatch(
      onSqlite
        ? /SEARCH event_counts USING PRIMARY KEY/
        : /Index Only Scan using event_counts_organization_id_property_value_hour_pk/,
    );
  });
});

describe("a list's total", () => {
  /** The statements one list read sends or runs, and its total. */
  async function listed(organizationId: number, params: Partial<ListParameters<EventProperty>>) {
    const query = await listQueryOf(db, EVENT_LIST, organizationId, { limit: 10, ...params });
    const { result, statements } = await withStatements(db, () =>
      listEvents(db, organizationId, query),
    );
    return { totalCount: result.totalCount, statements: statements.map(({ text }) => text) };
  }

  it('of every event or a search the counts hold is summed from them in any order', async () => {
    // An organization of its own: no count of its events is kept from an earlier read.
    const umbrella = (await createOrganization(db, 'Umbrella')).id;
    const stored = spreadEvents(umbrella, 240);
    await insertTestEvents(db, stored);
    const cases: Array<{ params: Partial<ListParameters<EventProperty>>; expected: number }> = [
      { params: { order_by: 'source' }, expected: stored.length },
      {
        params: { order_by: 'user_id', search_fields: ['category'], search_field_values: ['-1'] },
        expected: stored.filter(({ category }) => category === 'cat-1').length,
      },
      {
        params: {
          order_by: 'type',
          order_by_direction: 'desc',
          search_fields: ['type'],
          search_field_values: ['type-'],
        },
        expected: stored.length,
      },
    ];
    for (const { params, expected } of cases) {
      const { totalCount, statements } = await listed(umbrella, params);
      expect(totalCount).toBe(expected);
      // Counted row by row, a total read every matching event.
      expect(statements.filter((text) => /count\(\*\)/.test(text))).toEqual([]);
      expect(statements.filter((text) => /sum\(event_count\)/.test(text))).not.toEqual([]);
    }
  });

  it('of a search the counts do not hold is counted from the events', async () => {
    const hooli = (await createOrganization(db, 'Hooli')).id;
    const stored = spreadEvents(hooli, 60);
    await insertTestEvents(db, stored);
    const { totalCount, statements } = await listed(hooli, {
      search_fields: ['category', 'source'],
      search_field_values: ['cat-2', 'agent'],
    });
    expect(totalCount).toBe(
      stored.filter(({ category, source }) => category === 'cat-2' && source === 'agent').length,
    );
    expect(statements.filter((text) => /count\(\*\)/.test(text))).not.toEqual([]);
  });
});

// Every order of the events list is read from an index, on both databases (but two on SQLite,
// below): a page of any order, in either direction, reads its rows in order and stops at the
// page's end, where an order without one sorted all the organization's events first
// (docs/benchmarks.md, "Every shape of the events list"). The pages themselves are checked
// against the plain query in events-list-fast-paths.test.ts.

import { rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../src/db/engine/client.js';
import { migrateDb } from '../src/db/engine/migrate.js';
import { createOrganization } from '../src/db/repositories/organizations.js';
import { eventOrder } from '../src/db/repositories/event-conditions.js';
import { execute, runListRead, selectRows } from '../src/db/engine/portable-sql.js';
import { EVENT_PROPERTIES } from '../src/vocabulary/events.js';
import { freshDatabaseUrl, onSqlite } from './support/test-database.js';

let databaseUrl: string;
let db: Db;
let organizationId: number;

beforeAll(async () => {
  databaseUrl = await freshDatabaseUrl();
  db = createDb(databaseUrl);
  await migrateDb(db);
  organizationId = (await createOrganization(db, 'Acme')).id;
});

afterAll(async () => {
  await db.close();
  if (onSqlite) rmSync(dirname(databaseUrl), { recursive: true, force: true });
});

/** The plan of a page of the organization's events in the order, one line per step. */
async function planOf(order: ReturnType<typeof eventOrder>): Promise<string> {
  const page = sql`SELECT id FROM events WHERE organization_id = ${organizationId}
                   ORDER BY ${order} LIMIT 25`;
  return runListRead(db, function* () {
    if (db.kind === 'sqlite') {
      const rows = yield* selectRows<{ detail: string }>(sql`EXPLAIN QUERY PLAN ${page}`);
      return rows.map((row) => row.detail).join('\n');
    }
    // An empty table is cheaper to sort than to read through an index: forbidding the sort
    // asks whether an index can give the order at all (if none can, the plan still sorts).
    yield* execute(sql`SET LOCAL enable_sort = off`);
    const rows = yield* selectRows<{ 'QUERY PLAN': string }>(sql`EXPLAIN ${page}`);
    return rows.map((row) => row['QUERY PLAN']).join('\n');
  });
}

/**
 * Orders SQLite sorts: an index of these long, random texts halved the import's rate there
 * (src/db/schema/sqlite.ts says so; PostgreSQL indexes a prefix of each).
 */
const SORTED_ON_SQLITE = new Set(['description', 'attributes']);

describe('every order of the events list', () => {
  it.each(
    EVENT_PROPERTIES.filter((property) => !(onSqlite && SORTED_ON_SQLITE.has(property))).flatMap(
      (property) => [[property, 'asc'] as const, [property, 'desc'] as const],
    ),
  )('%s %s is read from an index, never sorted', async (property, direction) => {
    const plan = await planOf(eventOrder(db, { property, direction }));
    if (db.kind === 'sqlite') {
      expect(plan).toMatch(/USING (COVERING )?INDEX events_organization_\w+_idx/);
      expect(plan).not.toMatch(/TEMP B-TREE/);
    } else {
      expect(plan).toMatch(/Index (Only )?Scan (Backward )?using events_\w+_idx/);
      // An incremental sort orders only the rows whose indexed prefix ties, as the page reads.
      expect(plan).not.toMatch(/^\s*(->\s+)?Sort {2}\(/m);
    }
  });
});

// Plans as text, one line per step, for the tests that hold a statement to its plan: any
// statement's (planText), and one organization's ordered page (of the rows meeting a condition),
// for the tests that hold each list order to an index (events-list-order-indexes.test.ts,
// lists-order-indexes.test.ts), on a fresh database with one organization.

import { sql, type SQL } from 'drizzle-orm';
import { afterAll, beforeAll } from 'vitest';
import type { Db } from '../../src/db/engine/client.js';
import { createOrganization } from '../../src/db/repositories/organizations.js';
import { execute, runListRead, selectRows } from '../../src/db/engine/portable-sql.js';
import { createTestDb } from './test-database.js';

/** A migrated database with one organization for the file's tests; its plans of `table`. */
export function orderPlans(): {
  db: () => Db;
  planOf: (table: SQL, order: SQL, condition?: SQL) => Promise<string>;
} {
  let db: Db;
  let organizationId: number;
  beforeAll(async () => {
    db = await createTestDb();
    organizationId = (await createOrganization(db, 'Acme')).id;
  });
  afterAll(() => db.close());
  const planOf = (table: SQL, order: SQL, condition = sql`TRUE`): Promise<string> =>
    // An empty table is cheaper to sort than to read through an index: forbidding the sort asks
    // whether an index can give the order at all (if none can, the plan still sorts).
    planText(
      db,
      sql`SELECT id FROM ${table} WHERE organization_id = ${organizationId}
          AND ${condition} ORDER BY ${order} LIMIT 25`,
      ['enable_sort'],
    );
  return { db: () => db, planOf };
}

/**
 * The plan of `statement`, one line per step: SQLite's EXPLAIN QUERY PLAN, or PostgreSQL's EXPLAIN
 * with each planner setting of `forbidden` (enable_sort, enable_seqscan, ...) off for the read.
 */
export function planText(
  db: Db,
  statement: SQL,
  forbidden: readonly string[] = [],
): Promise<string> {
  return runListRead(db, function* () {
    if (db.kind === 'sqlite') {
      const rows = yield* selectRows<{ detail: string }>(sql`EXPLAIN QUERY PLAN ${statement}`);
      return rows.map((row) => row.detail).join('\n');
    }
    for (const setting of forbidden) yield* execute(sql`SET LOCAL ${sql.raw(setting)} = off`);
    const rows = yield* selectRows<{ 'QUERY PLAN': string }>(sql`EXPLAIN ${statement}`);
    return rows.map((row) => row['QUERY PLAN']).join('\n');
  });
}

// Plans as text, one line per step, for the tests that hold a statement to its plan: any
// statement's (planText), and one organization's ordered page (of the rows meeting a condition),
// for the tests that hold each list order to an index (events-list-order-indexes.test.ts,
// lists-order-indexes.test.ts), on a fresh database with one organization.

import { sql, type SQL } from 'drizzle-orm';
import { afterAll, beforeAll, expect } from 'vitest';
import type { Db } from '../../src/db/engine/client.js';
import type { ListResource } from '../../src/domain/list-query.js';
import type { ListQuery } from '../../src/vocabulary/list-query.js';
import { listQueryOf } from './list-queries.js';
import { withStatements, type SentQuery } from './sent-statements.js';
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

/** A node of PostgreSQL's JSON plan. */
interface PlanNode {
  'Actual Rows': number;
  /** The table (or partition) a scan reads. */
  'Relation Name'?: string;
  Plans?: PlanNode[];
}

const nodesOf = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(nodesOf)];

/**
 * The rows the table reads of a statement a PostgreSQL pool sent return, run again with its values
 * under EXPLAIN ANALYZE: with sequential and bitmap scans off, as a few hundred rows are cheaper
 * to read whole than by index, where a large table's plan would read them by index.
 */
export async function rowsScanned(db: Db, { text, values }: SentQuery): Promise<number> {
  if (db.kind !== 'postgres') throw new Error('rowsScanned reads a PostgreSQL plan');
  const client = await db.listPool.connect();
  try {
    await client.query('BEGIN; SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off');
    const { rows } = await client.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(
      `EXPLAIN (ANALYZE, FORMAT JSON) ${text}`,
      values,
    );
    return nodesOf(rows[0]!['QUERY PLAN'][0].Plan)
      .filter((node) => node['Relation Name'] !== undefined)
      .reduce((total, node) => total + node['Actual Rows'], 0);
  } finally {
    await client.query('ROLLBACK');
    client.release();
  }
}

/**
 * Checks a list's first 100 by a nullable long text, ascending (page 0), and its last 100
 * descending (`lastPage`), on PostgreSQL: both are `withoutText` (the first 100 ids of rows
 * without the text), in each direction's order, and each page's statement scans fewer than
 * `maxScanned` rows (rowsScanned).
 */
export async function expectFirstWithoutText<P extends string>(
  db: Db,
  resource: ListResource<P>,
  organizationId: number,
  property: P,
  expected: { lastPage: number; withoutText: number[]; maxScanned: number },
  listIds: (query: ListQuery<P>) => Promise<number[]>,
): Promise<void> {
  if (db.kind !== 'postgres') throw new Error('expectFirstWithoutText reads a PostgreSQL plan');
  const { statements } = await withStatements(db, async () => {
    for (const [direction, page] of [
      ['asc', 0],
      ['desc', expected.lastPage],
    ] as const) {
      const query = await listQueryOf(db, resource, organizationId, {
        page,
        limit: 100,
        order_by: property,
        order_by_direction: direction,
      });
      // The last page descending is read ascending from the start, then reversed.
      expect(await listIds(query)).toEqual(
        direction === 'asc' ? expected.withoutText : [...expected.withoutText].reverse(),
      );
    }
  });
  const pages = statements.filter(({ text }) => text.includes('AS "sortKey"'));
  expect(pages).toHaveLength(2);
  for (const page of pages) expect(await rowsScanned(db, page)).toBeLessThan(expected.maxScanned);
}

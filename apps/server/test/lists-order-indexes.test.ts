// The prompts and experiments lists' orders that have an index are read from it, on both
// databases: a page of such an order, in either direction, reads its rows in order and stops at
// the page's end, where an order without one sorted all the organization's rows first
// (docs/benchmarks.md, "Every shape of the prompts and experiments lists"). The orders that sort
// (a long text, or a value computed per row) are listed there.

import { rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { sql, type SQL, type SQLWrapper } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../src/db/engine/client.js';
import { migrateDb } from '../src/db/engine/migrate.js';
import { createOrganization } from '../src/db/repositories/organizations.js';
import { execute, runListRead, selectRows } from '../src/db/engine/portable-sql.js';
import { experiments, prompts } from '../src/db/schema/sqlite.js';
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

/** The plan of a page of the organization's rows of `table` in the order, one line per step. */
async function planOf(table: SQL, order: SQL): Promise<string> {
  const page = sql`SELECT id FROM ${table} WHERE organization_id = ${organizationId}
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

/** Each indexed order: the list's property, its table and what the list orders it by. */
const INDEXED: Array<[string, 'prompts' | 'experiments', (db: Db) => SQLWrapper]> = [
  ['llm_config', 'prompts', (db) => db.spelling.jsonText(prompts.llmConfig)],
  ['last_updated', 'prompts', () => prompts.lastUpdated],
  ['last_updated_by', 'prompts', () => prompts.lastUpdatedBy],
  ['session_end_enabled', 'prompts', () => prompts.sessionEndEnabled],
  ['name', 'experiments', () => experiments.name],
  ['status', 'experiments', () => experiments.status],
  ['target_id', 'experiments', () => experiments.targetId],
  ['created_at', 'experiments', () => experiments.createdAt],
  ['updated_at', 'experiments', () => experiments.updatedAt],
  ['started_at', 'experiments', () => experiments.startedAt],
  ['stopped_at', 'experiments', () => experiments.stoppedAt],
];

describe('every indexed order of the prompts and experiments lists', () => {
  it.each(
    INDEXED.flatMap(([property, table, column]) =>
      (['asc', 'desc'] as const).map((direction) => [table, property, direction, column] as const),
    ),
  )(
    '%s by %s %s is read from an index, never sorted',
    async (table, _property, direction, column) => {
      const id = table === 'prompts' ? prompts.id : experiments.id;
      const order = sql`${db.spelling.orderTerm(column(db), direction)}, ${db.spelling.orderTerm(id, direction)}`;
      const plan = await planOf(sql`${sql.identifier(table)}`, order);
      if (db.kind === 'sqlite') {
        expect(plan).toMatch(new RegExp(`USING (COVERING )?INDEX ${table}_organization_\\w+_idx`));
        expect(plan).not.toMatch(/TEMP B-TREE/);
      } else {
        expect(plan).toMatch(new RegExp(`Index (Only )?Scan (Backward )?using ${table}_\\w+_idx`));
        expect(plan).not.toMatch(/^\s*(->\s+)?(Incremental )?Sort {2}\(/m);
      }
    },
  );
});

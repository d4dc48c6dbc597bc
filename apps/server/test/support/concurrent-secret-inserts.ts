// Server processes that start at the same time on a database migrated before a secret's table was
// filled: each inserts the secret, then migrates. Shared by the tests of the secrets migrateDb
// stores (list cursors, resume tokens).

import { sql } from 'drizzle-orm';
import type { SQLiteTable } from 'drizzle-orm/sqlite-core';
import { createDb, type Db } from '../../src/db/engine/client.js';
import { migrateDb } from '../../src/db/migrate.js';
import { createWorkspace } from '../fixtures/cli-harness.js';
import { queryTestDb } from './test-database.js';

/**
 * Runs `check` on seven handles of a new database (the first one's first) once `table` was
 * emptied and every handle ran `insert` and then migrateDb at the same time; closes them after.
 */
export async function afterConcurrentInserts(
  table: SQLiteTable,
  insert: (db: Db) => Promise<void>,
  check: (handles: readonly Db[]) => Promise<void>,
): Promise<void> {
  const workspace = await createWorkspace();
  const handles: Db[] = [];
  try {
    const first = createDb(workspace.databaseUrl);
    handles.push(first);
    await migrateDb(first);
    await queryTestDb(first, sql`DELETE FROM ${table} RETURNING id`);
    for (let i = 0; i < 6; i += 1) handles.push(createDb(workspace.databaseUrl));
    await Promise.all(handles.map((db) => insert(db)));
    await Promise.all(handles.map((db) => migrateDb(db)));
    await check(handles);
  } finally {
    await Promise.all(handles.map((db) => db.close()));
    workspace.remove();
  }
}

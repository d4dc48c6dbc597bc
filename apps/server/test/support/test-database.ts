// The database a test runs on. One suite serves both backends: vitest runs it once per project
// (vitest.config.ts), and the `postgres` project sets AGENTLINE_TEST_POSTGRES_URL. Every call
// gives a fresh, empty database: a file in a temporary folder, or a new PostgreSQL database
// copied from a migrated template (test/support/postgres-global-setup.ts), which takes a few
// milliseconds instead of running every migration again.

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SQL } from 'drizzle-orm';
import pg from 'pg';
import { createDb, migrateDb, type Db } from '../../src/db/client.js';

export const POSTGRES_ADMIN_URL = process.env.AGENTLINE_TEST_POSTGRES_URL;
export const TEST_BACKEND: Db['kind'] = POSTGRES_ADMIN_URL ? 'postgres' : 'sqlite';
export const TEMPLATE_DATABASE = 'agentline_test_template';
/** Every test database's name starts with this, so a run can drop what an earlier one left. */
export const TEST_DATABASE_PREFIX = 'agentline_test_';

let created = 0;

/** The URL of `database` on the test server (same role and host as the admin URL). */
export function postgresUrlOf(adminUrl: string, database: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

/** A fresh, empty (unmigrated for SQLite, migrated for PostgreSQL) database's URL. */
export async function freshDatabaseUrl(): Promise<string> {
  if (!POSTGRES_ADMIN_URL) {
    return join(mkdtempSync(join(tmpdir(), 'agentline-test-')), 'agentline.db');
  }
  created += 1;
  const name = `${TEST_DATABASE_PREFIX}${process.pid}_${created}`;
  const admin = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE "${name}" TEMPLATE "${TEMPLATE_DATABASE}"`);
  } finally {
    await admin.end();
  }
  return postgresUrlOf(POSTGRES_ADMIN_URL, name);
}

/**
 * A fresh migrated database for one test file: in memory on SQLite (nothing to clean up), a new
 * database on PostgreSQL (dropped by the global teardown).
 */
export async function createTestDb(): Promise<Db> {
  const db = createDb(POSTGRES_ADMIN_URL ? await freshDatabaseUrl() : ':memory:');
  await migrateDb(db);
  return db;
}

export const onPostgres = TEST_BACKEND === 'postgres';
export const onSqlite = TEST_BACKEND === 'sqlite';

/**
 * Runs raw SQL on either backend and returns its rows, for tests that arrange or inspect the
 * database directly. Write it in the SQL both dialects share (table and column references from
 * the SQLite schema render as quoted identifiers on both; use TRUE/FALSE for booleans).
 */
export async function queryTestDb<T = Record<string, unknown>>(db: Db, query: SQL): Promise<T[]> {
  if (db.kind === 'sqlite') return db.orm.all<T>(query);
  const result = await db.orm.execute(query);
  return result.rows as T[];
}

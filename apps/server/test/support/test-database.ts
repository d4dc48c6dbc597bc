// The database a test runs on. One suite serves both backends: vitest runs it once per project
// (vitest.config.ts), which sets AGENTLINE_TEST_BACKEND, the run's id and, for `postgres`,
// AGENTLINE_TEST_POSTGRES_URL (read only there: a variable exported in the shell reaches the
// `sqlite` project's workers too). Every call gives a fresh, empty database: a file in the run's
// temporary folder (run-temp-dir.ts, which removes it), or a new PostgreSQL database copied from
// a migrated template (test/support/postgres-global-setup.ts), which takes a few milliseconds
// instead of running every migration again. With AGENTLINE_TEST_THROUGH_PGBOUNCER, the tests
// reach those databases through PgBouncer in transaction mode (AGENTLINE_TEST_PGBOUNCER_URL),
// while creating them still goes straight to PostgreSQL.

import { rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { sql, type SQL } from 'drizzle-orm';
import type { EventToImport } from '../../src/db/repositories/event-import.js';
import pg from 'pg';
import { createDb, isPostgresUrl, type Db } from '../../src/db/engine/client.js';
import type { SqliteDb } from '../../src/db/engine/sqlite-open.js';
import { migrateDb } from '../../src/db/migrate.js';
import { insertValues, runSteps, selectRows } from '../../src/db/engine/portable-sql.js';
import { events, sessions } from '../../src/db/schema/sqlite.js';
import { runTempFolder } from './run-temp-dir.js';

export const TEST_BACKEND: Db['kind'] =
  process.env.AGENTLINE_TEST_BACKEND === 'postgres' ? 'postgres' : 'sqlite';
/** The test server, as a role that may create databases; undefined in the `sqlite` project. */
export const POSTGRES_ADMIN_URL =
  TEST_BACKEND === 'postgres' ? process.env.AGENTLINE_TEST_POSTGRES_URL : undefined;
/** PgBouncer in transaction mode in front of the test server (scripts/pgbouncer-setup.sh). */
export const PGBOUNCER_URL =
  TEST_BACKEND === 'postgres' ? process.env.AGENTLINE_TEST_PGBOUNCER_URL : undefined;
const THROUGH_PGBOUNCER = process.env.AGENTLINE_TEST_THROUGH_PGBOUNCER === 'true';

/** Every test database's name starts with this; then the run's id (the vitest process's pid). */
export const TEST_DATABASE_PREFIX = 'agentline_test_';

/** The names of one run's databases, so concurrent runs on one server leave each other alone. */
export function runDatabasePrefix(runId: string): string {
  return `${TEST_DATABASE_PREFIX}${runId}_`;
}

export function templateDatabase(runId: string): string {
  return `${runDatabasePrefix(runId)}template`;
}

let created = 0;

/** The URL of `database` on the test server (same role and host as the admin URL). */
export function postgresUrlOf(adminUrl: string, database: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

/** The same database's URL through PgBouncer (PGBOUNCER_URL's role and address). */
export function throughPgbouncer(databaseUrl: string): string {
  return postgresUrlOf(PGBOUNCER_URL!, new URL(databaseUrl).pathname.slice(1));
}

/**
 * The same database's URL on PostgreSQL itself, as freshDatabaseUrl gives it without
 * AGENTLINE_TEST_THROUGH_PGBOUNCER: for a test of what a connection of its own to PostgreSQL does
 * (a new session's settings, a session ended under it), which PgBouncer's shared server
 * connections would hide.
 */
export function directUrl(databaseUrl: string): string {
  return postgresUrlOf(POSTGRES_ADMIN_URL!, new URL(databaseUrl).pathname.slice(1));
}

/** Runs `work` on a connection of the test server's admin URL, closed afterwards. */
export async function withAdmin<T>(
  adminUrl: string,
  work: (admin: pg.Client) => Promise<T>,
): Promise<T> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    return await work(admin);
  } finally {
    await admin.end();
  }
}

/**
 * Drops a database. A plain DROP only: it stops an autovacuum worker busy there by itself, which
 * WITH (FORCE) refuses to do on PostgreSQL 15 for a role that is not a superuser (42501, "must be
 * a member of the role whose process is being terminated"), whenever one happens to be running.
 * When sessions are still connected (55006), such as a killed run's, the ones of our own role
 * (the only ones this role may end) are ended first, waiting for each to go, then DROP again.
 */
export async function dropDatabase(admin: pg.Client, name: string): Promise<void> {
  const drop = () => admin.query(`DROP DATABASE IF EXISTS "${name}"`);
  try {
    await drop();
  } catch (error) {
    if ((error as { code?: string }).code !== '55006') throw error;
    await admin.query(
      `SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity
        WHERE datname = $1 AND usename = current_user AND pid <> pg_backend_pid()`,
      [name],
    );
    await drop();
  }
}

const makers = new Map<string, Promise<pg.Client>>();

/** What PostgreSQL names this worker's database maker (databaseMaker), its sessions apart. */
export const DATABASE_MAKER_NAME = `agentline test databases ${process.pid}`;

/**
 * This worker's connection to an admin URL, which creates its databases there: one for all its
 * test files rather than one per database, as each new connection costs the PostgreSQL server tens
 * of milliseconds of CPU (docs/benchmarks.md, "Figures behind the code"). It ends with the worker;
 * one that fails is replaced by the next call.
 */
function databaseMaker(adminUrl: string): Promise<pg.Client> {
  let maker = makers.get(adminUrl);
  if (!maker) {
    maker = (async () => {
      const client = new pg.Client({
        connectionString: adminUrl,
        application_name: DATABASE_MAKER_NAME,
      });
      const forget = () => makers.delete(adminUrl);
      client.on('error', forget).on('end', forget);
      try {
        await client.connect();
      } catch (error) {
        forget();
        throw error;
      }
      return client;
    })();
    makers.set(adminUrl, maker);
  }
  return maker;
}

/**
 * A fresh, empty database's URL: unmigrated for SQLite, migrated for PostgreSQL (a copy of the
 * run's template) unless `unmigrated` (for a migration's own test). On PostgreSQL it is made on
 * the test server, or on the server of the admin URL `on` (migrated there by migrateDb, as the
 * run's template is on the test server only).
 */
export async function freshDatabaseUrl({
  unmigrated = false,
  on = POSTGRES_ADMIN_URL,
}: { unmigrated?: boolean; on?: string } = {}): Promise<string> {
  if (!POSTGRES_ADMIN_URL || !on) {
    return join(runTempFolder('agentline-test-'), 'agentline.db');
  }
  created += 1;
  const runId = process.env.AGENTLINE_TEST_RUN!;
  const name = `${runDatabasePrefix(runId)}${process.pid}_${created}`;
  const elsewhere = on !== POSTGRES_ADMIN_URL;
  const template = unmigrated || elsewhere ? '' : ` TEMPLATE "${templateDatabase(runId)}"`;
  await (await databaseMaker(on)).query(`CREATE DATABASE "${name}"${template}`);
  const url = postgresUrlOf(on, name);
  if (elsewhere) {
    if (!unmigrated) {
      const db = createDb(url);
      await migrateDb(db);
      await db.close();
    }
    return url;
  }
  return THROUGH_PGBOUNCER ? throughPgbouncer(url) : url;
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

/** A migrated database that the server processes a test starts open too. */
export interface SharedTestDb {
  databaseUrl: string;
  db: Db;
  /** Closes the handle; on SQLite removes the file's folder (the global teardown drops PostgreSQL's). */
  close(): Promise<void>;
}

/** A fresh migrated database for one test file and its server processes: a file on SQLite. */
export async function createSharedTestDb(): Promise<SharedTestDb> {
  const databaseUrl = await freshDatabaseUrl();
  const db = createDb(databaseUrl);
  await migrateDb(db);
  return {
    databaseUrl,
    db,
    close: async () => {
      await db.close();
      if (!isPostgresUrl(databaseUrl)) {
        rmSync(dirname(databaseUrl), { recursive: true, force: true });
      }
    },
  };
}

export const onPostgres = TEST_BACKEND === 'postgres';
export const onSqlite = TEST_BACKEND === 'sqlite';

/**
 * Runs raw SQL on either backend and returns its rows, for tests that arrange or inspect the
 * database directly. Write it in the SQL both dialects share (table and column references from
 * the SQLite schema render as quoted identifiers on both; use TRUE/FALSE for booleans).
 */
export async function queryTestDb<T = Record<string, unknown>>(db: Db, query: SQL): Promise<T[]> {
  return runSteps(db, () => selectRows<T>(query));
}

/**
 * SQLite: throws unless the FTS5 description index holds exactly the stored descriptions (rank 1
 * compares it with the events table, so a missed or doubled event fails it).
 */
export function checkDescriptionIndex(db: SqliteDb): void {
  db.sqlite.exec(
    `INSERT INTO events_description_fts (events_description_fts, rank) VALUES ('integrity-check', 1)`,
  );
}

export interface TestEvent {
  organizationId: number;
  timestamp: string;
  sessionId?: string | null;
  conversationId?: string | null;
  source?: string | null;
  sourceId?: string | null;
  category?: string | null;
  type?: string | null;
  userId?: string | null;
  description?: string | null;
  attributes?: Record<string, unknown> | null;
}

/** A test event's stored fields, every one given (NULL when the test left it out). */
function storedFields(row: TestEvent): Omit<EventToImport, 'importKey'> {
  return {
    timestamp: row.timestamp,
    sessionId: row.sessionId ?? null,
    conversationId: row.conversationId ?? null,
    source: row.source ?? null,
    sourceId: row.sourceId ?? null,
    category: row.category ?? null,
    type: row.type ?? null,
    userId: row.userId ?? null,
    description: row.description ?? null,
    // JSON as text: both backends store it so, and better-sqlite3 cannot bind an object.
    attributes: row.attributes ? JSON.stringify(row.attributes) : null,
  };
}

/** Test events as the import hands them over, with keys `${keyPrefix}-0`, `-1`, ... */
export function toImport(rows: readonly TestEvent[], keyPrefix: string): EventToImport[] {
  return rows.map((row, i) => ({ importKey: `${keyPrefix}-${i}`, ...storedFields(row) }));
}

/**
 * `count` events to import, a second apart from 2026-05-01, each a tool call "Looked up order i"
 * with keys `${keyPrefix}-0`, `-1`, ... and what `event(i)` sets instead.
 */
export function secondApartEvents(
  keyPrefix: string,
  count: number,
  event: (i: number) => Partial<EventToImport>,
): EventToImport[] {
  return Array.from({ length: count }, (_, i) => ({
    importKey: `${keyPrefix}-${i}`,
    timestamp: new Date(Date.UTC(2026, 4, 1) + i * 1000).toISOString(),
    sessionId: null,
    conversationId: null,
    source: null,
    sourceId: null,
    category: 'tool',
    type: 'tool-call',
    userId: null,
    description: `Looked up order ${i}`,
    attributes: null,
    ...event(i),
  }));
}

/** Inserts events as written by the service (no import key), in the order given. */
export async function insertTestEvents(db: Db, rows: readonly TestEvent[]): Promise<void> {
  if (rows.length === 0) return;
  const values = rows.map((row) => ({ organizationId: row.organizationId, ...storedFields(row) }));
  await queryTestDb(db, sql`INSERT INTO ${events} ${insertValues(events, values)}`);
}

/** Inserts sessions as routing stores them, with the `createdAt` each row says. */
export async function insertTestSessions(
  db: Db,
  rows: ReadonlyArray<typeof sessions.$inferInsert>,
): Promise<void> {
  if (rows.length === 0) return;
  await queryTestDb(db, sql`INSERT INTO ${sessions} ${insertValues(sessions, rows)}`);
}

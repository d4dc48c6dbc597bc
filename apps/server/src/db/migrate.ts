// The schema's migrations, applied at start-up by the server and by `agentline migrate`; kept
// apart from the database client (engine/), which knows nothing of what the tables hold.

import { join } from 'node:path';
import { drizzle as drizzleSqlite } from 'drizzle-orm/better-sqlite3';
import { migrate as migrateSqlite } from 'drizzle-orm/better-sqlite3/migrator';
import { drizzle as drizzlePostgres } from 'drizzle-orm/node-postgres';
import { migrate as migratePostgres } from 'drizzle-orm/node-postgres/migrator';
import { readMigrationFiles } from 'drizzle-orm/migrator';
import { sql } from 'drizzle-orm';
import pg from 'pg';
import type { Db, PostgresDb } from './engine/client.js';
import { isMissingRelation } from './engine/errors.js';
import { runSteps, selectRows } from './engine/portable-sql.js';
import { ensureCursorSecret } from './repositories/cursor-secrets.js';
import { ensureResumeTokenSecret } from './repositories/resume-tokens.js';
import { ensureEventPartitions } from './repositories/event-partitions.js';
import { newServerSecret } from '../domain/server-secrets.js';
import { PACKAGE_ROOT } from '../package-root.js';

const MIGRATIONS_FOLDERS = {
  sqlite: join(PACKAGE_ROOT, 'drizzle', 'sqlite'),
  postgres: join(PACKAGE_ROOT, 'drizzle', 'postgres'),
};

/** Any constant: the key of the advisory lock that lets one process at a time migrate. */
export const MIGRATION_LOCK_KEY = 0x6167_6c6d; // "aglm"

/**
 * Applies the committed migrations that have not run yet, and stores the first list cursor secret
 * and the resume token secret if there are none (repositories/cursor-secrets.ts,
 * repositories/resume-tokens.ts); running it again is a no-op.
 */
export async function migrateDb(db: Db): Promise<void> {
  if (db.kind === 'sqlite') {
    migrateSqlite(drizzleSqlite({ client: db.sqlite }), {
      migrationsFolder: MIGRATIONS_FOLDERS.sqlite,
    });
    await ensureSecrets(db);
    return;
  }
  if (!(await hasEveryMigration(db))) await migratePostgresInTurn(db);
  // The inserts need no lock: each writes a secret only where none exists.
  await ensureSecrets(db);
  // The months events are about to go in, before an import or a server writes any.
  await ensureEventPartitions(db);
}

/**
 * Whether the PostgreSQL database has every committed migration: drizzle applies those newer than
 * the last one recorded, so none is left when that one is as new as the newest file. Asked
 * before the turn, which a start on a migrated database then skips: the turn's connection of its
 * own cost PostgreSQL as much CPU as the start's other statements (docs/benchmarks.md).
 */
async function hasEveryMigration(db: Db): Promise<boolean> {
  const newest = Math.max(
    ...readMigrationFiles({ migrationsFolder: MIGRATIONS_FOLDERS.postgres }).map(
      (migration) => migration.folderMillis,
    ),
  );
  try {
    const [row] = await runSteps(db, () =>
      selectRows<{ last: number | null }>(
        sql`SELECT max(created_at) AS last FROM drizzle.__drizzle_migrations`,
      ),
    );
    return row?.last != null && Number(row.last) >= newest;
  } catch (error) {
    // A database never migrated has no such table, or not even its schema.
    if (isMissingRelation(error)) return false;
    throw error;
  }
}

/**
 * Applies PostgreSQL's missing migrations. Several processes may start at once on one database:
 * they take turns, and the later ones find nothing left to apply. The turn is a
 * transaction-scoped lock, held by a transaction left open on a connection of its own (beside the
 * pool, whose only connection the migrator may need) until the migrator is done: a session lock
 * would not hold behind PgBouncer in transaction mode, where the migrator's statements and the
 * unlock may each reach another server connection than the lock, and another process's lock the
 * same one.
 */
async function migratePostgresInTurn(db: PostgresDb): Promise<void> {
  const turn = new pg.Client(db.pool.options);
  await turn.connect();
  try {
    await turn.query('BEGIN');
    await turn.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY]);
    await migratePostgres(drizzlePostgres({ client: db.pool }), {
      migrationsFolder: MIGRATIONS_FOLDERS.postgres,
    });
  } finally {
    // Ends the transaction and with it the turn, as the connection's loss would.
    await turn.query('ROLLBACK').catch(() => {});
    await turn.end();
  }
}

async function ensureSecrets(db: Db): Promise<void> {
  await ensureCursorSecret(db, newServerSecret());
  await ensureResumeTokenSecret(db, newServerSecret());
}

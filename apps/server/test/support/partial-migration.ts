// A database brought up to one of the committed migrations and no further, to write data as it
// was stored before a later migration and then run that migration over it (the time partitions'
// test, the experiments' kept control agent).

import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { drizzle as drizzleSqlite } from 'drizzle-orm/better-sqlite3';
import { migrate as migrateSqlite } from 'drizzle-orm/better-sqlite3/migrator';
import { drizzle as drizzlePostgres } from 'drizzle-orm/node-postgres';
import { migrate as migratePostgres } from 'drizzle-orm/node-postgres/migrator';
import type { Db } from '../../src/db/engine/client.js';

/**
 * Applies the committed migrations of `db`'s kind up to and including `through` (a migration's
 * tag, such as `0013_event_counts`); migrateDb applies the rest later as it would on an upgrade.
 */
export async function migrateThrough(db: Db, through: string): Promise<void> {
  const migrations = fileURLToPath(new URL(`../../drizzle/${db.kind}`, import.meta.url));
  const folder = mkdtempSync(join(tmpdir(), 'agentline-migrations-'));
  try {
    cpSync(migrations, folder, { recursive: true });
    const journalPath = join(folder, 'meta', '_journal.json');
    const journal = JSON.parse(readFileSync(journalPath, 'utf8')) as {
      entries: Array<{ tag: string }>;
    };
    const last = journal.entries.findIndex(({ tag }) => tag === through);
    if (last < 0) throw new Error(`no migration tagged ${through} in ${migrations}`);
    journal.entries = journal.entries.slice(0, last + 1);
    writeFileSync(journalPath, JSON.stringify(journal));
    if (db.kind === 'sqlite') {
      migrateSqlite(drizzleSqlite({ client: db.sqlite }), { migrationsFolder: folder });
      return;
    }
    const client = await db.pool.connect();
    try {
      await migratePostgres(drizzlePostgres({ client }), { migrationsFolder: folder });
    } finally {
      client.release();
    }
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

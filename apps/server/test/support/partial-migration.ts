// A PostgreSQL database brought up to one of the committed migrations and no further, to write
// data as it was stored before a later migration and then run that migration over it (the time
// partitions' test).

import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { drizzle } from 'drizzle-orm/node-postgres';
import { migrate } from 'drizzle-orm/node-postgres/migrator';
import type { PostgresDb } from '../../src/db/engine/client.js';

const MIGRATIONS = fileURLToPath(new URL('../../drizzle/postgres', import.meta.url));

/**
 * Applies the committed PostgreSQL migrations up to and including `through` (a migration's tag,
 * such as `0013_event_counts`); migrateDb applies the rest later as it would on an upgrade.
 */
export async function migratePostgresThrough(db: PostgresDb, through: string): Promise<void> {
  const folder = mkdtempSync(join(tmpdir(), 'agentline-migrations-'));
  try {
    cpSync(MIGRATIONS, folder, { recursive: true });
    const journalPath = join(folder, 'meta', '_journal.json');
    const journal = JSON.parse(readFileSync(journalPath, 'utf8')) as {
      entries: Array<{ tag: string }>;
    };
    const last = journal.entries.findIndex(({ tag }) => tag === through);
    if (last < 0) throw new Error(`no migration tagged ${through} in ${MIGRATIONS}`);
    journal.entries = journal.entries.slice(0, last + 1);
    writeFileSync(journalPath, JSON.stringify(journal));
    const client = await db.pool.connect();
    try {
      await migrate(drizzle({ client }), { migrationsFolder: folder });
    } finally {
      client.release();
    }
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

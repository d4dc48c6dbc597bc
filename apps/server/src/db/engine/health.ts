import { sql } from 'drizzle-orm';
import type { Db } from './client.js';
import { runSteps, selectRows } from './portable-sql.js';

/** Throws if the database cannot answer a trivial query (used by /readyz). */
export async function pingDb(db: Db): Promise<void> {
  await runSteps(db, () => selectRows(sql`SELECT 1`));
}

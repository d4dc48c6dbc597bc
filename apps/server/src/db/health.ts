import { sql } from 'drizzle-orm';
import type { Db } from './client.js';

/** Throws if the database cannot answer a trivial query (used by /readyz). */
export async function pingDb(db: Db): Promise<void> {
  if (db.kind === 'sqlite') db.sqlite.prepare('SELECT 1').get();
  else await db.orm.execute(sql`SELECT 1`);
}

import type { Db } from './client.js';

/** Throws if the database cannot answer a trivial query (used by /readyz). */
export async function pingDb(db: Db): Promise<void> {
  db.sqlite.prepare('SELECT 1').get();
}

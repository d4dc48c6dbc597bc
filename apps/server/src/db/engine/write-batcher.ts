// SQLite's group commit for small, frequent writes (routed sessions): the writes gathered in one
// turn of the event loop (gather-batches.ts) are committed together, and nobody is answered
// before the commit that holds their write.
//
// Most of a small write's cost is the commit (every touched page goes to the WAL), so sixteen
// concurrent sessions cost little more than one: batchedWrite runs each write in its own
// savepoint of one write transaction, so one that fails (an unknown target) rolls back alone.

import { perDatabase } from './caches.js';
import type { SqliteDb } from './sqlite-open.js';
import { gatherBatches, type Outcome } from './gather-batches.js';
import { inWriteTransaction } from './sqlite-write-lock.js';

// Inside the batch's transaction, better-sqlite3 runs a transaction function as a savepoint.
const savepointOf = perDatabase((db: SqliteDb) =>
  db.sqlite.transaction((work: () => unknown) => work()),
);

const commitOnSqlite = gatherBatches((db: SqliteDb, works: Array<() => unknown>) =>
  // If the commit itself fails (a full disk, a lost lock), nothing of the batch was written.
  inWriteTransaction(db, () => {
    const runOne = savepointOf(db);
    const outcomes: Outcome<unknown>[] = [];
    for (const work of works) {
      try {
        outcomes.push({ ok: true, value: runOne(work) });
      } catch (error) {
        outcomes.push({ ok: false, error });
      }
    }
    return outcomes;
  }),
);

/**
 * Runs `work` (synchronous, using the same connection) in the next group commit and resolves
 * with its result once that commit is durable in the WAL.
 */
export function batchedWrite<T>(db: SqliteDb, work: () => T): Promise<T> {
  return commitOnSqlite(db, work) as Promise<T>;
}

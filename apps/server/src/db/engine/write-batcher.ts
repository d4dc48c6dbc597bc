// SQLite's group commit for small, frequent writes (routed sessions): the writes gathered in one
// turn of the event loop (gather-batches.ts) are committed together, and nobody is answered
// before the commit that holds their write.
//
// Most of a small write's cost is the commit (every touched page goes to the WAL), so sixteen
// concurrent sessions cost little more than one: batchedWrite runs each write in its own
// savepoint of one write transaction, so one that fails (an unknown target) rolls back alone.

import type { SqliteDb } from './client.js';
import { gatherBatches, type Outcome } from './gather-batches.js';

const commitOnSqlite = gatherBatches((db: SqliteDb, works: Array<() => unknown>) => {
  const outcomes: Outcome<unknown>[] = [];
  // better-sqlite3 runs a transaction function called inside another one as a savepoint.
  const runOne = db.sqlite.transaction((work: () => unknown) => work());
  const runAll = db.sqlite.transaction(() => {
    for (const work of works) {
      try {
        outcomes.push({ ok: true, value: runOne(work) });
      } catch (error) {
        outcomes.push({ ok: false, error });
      }
    }
  });
  // If the commit itself fails (a full disk, a lost lock), nothing of the batch was written.
  runAll.immediate();
  return outcomes;
});

/**
 * Runs `work` (synchronous, using the same connection) in the next group commit and resolves
 * with its result once that commit is durable in the WAL.
 */
export function batchedWrite<T>(db: SqliteDb, work: () => T): Promise<T> {
  return commitOnSqlite(db, work) as Promise<T>;
}

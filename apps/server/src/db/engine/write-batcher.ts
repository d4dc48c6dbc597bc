// Group commit for small, frequent writes (routed sessions). Writes that arrive while the event
// loop is busy are committed together, and each caller still gets its own result or error;
// nobody is answered before the commit that holds their write.
//
// On SQLite most of a small write's cost is the commit (every touched page goes to the WAL), so
// sixteen concurrent sessions cost little more than one: batchedWrite runs each write in its own
// savepoint of one write transaction, so one that fails (an unknown target) rolls back alone.
// PostgreSQL's session routing gathers its writes the same way (gatherWrites) and commits each
// batch with set-based statements of its own (repositories/sessions.ts).

import type { SqliteDb } from './client.js';

export type Outcome<R> = { ok: true; value: R } | { ok: false; error: unknown };

interface Pending<I, R> {
  item: I;
  resolve: (value: R) => void;
  reject: (error: unknown) => void;
}

/**
 * Gathers the items submitted for a database while the event loop is busy and hands them to
 * `commit` together on its next turn. Each submitter gets its own outcome; when `commit` throws
 * (the commit itself failed), every submitter gets that error.
 */
export function gatherWrites<D extends object, I, R>(
  commit: (db: D, items: I[]) => Outcome<R>[] | Promise<Outcome<R>[]>,
): (db: D, item: I) => Promise<R> {
  const queues = new WeakMap<D, Array<Pending<I, R>>>();

  async function flush(db: D, batch: Array<Pending<I, R>>): Promise<void> {
    queues.delete(db);
    let outcomes: Outcome<R>[];
    try {
      outcomes = await commit(
        db,
        batch.map((pending) => pending.item),
      );
    } catch (error) {
      for (const pending of batch) pending.reject(error);
      return;
    }
    batch.forEach((pending, index) => {
      const outcome = outcomes[index]!;
      if (outcome.ok) pending.resolve(outcome.value);
      else pending.reject(outcome.error);
    });
  }

  return (db, item) =>
    new Promise<R>((resolve, reject) => {
      let queue = queues.get(db);
      if (!queue) {
        queue = [];
        queues.set(db, queue);
        const batch = queue;
        setImmediate(() => void flush(db, batch));
      }
      queue.push({ item, resolve, reject });
    });
}

const commitOnSqlite = gatherWrites((db: SqliteDb, works: Array<() => unknown>) => {
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
